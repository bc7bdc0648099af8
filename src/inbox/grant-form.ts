/**
 * "Approve and grant" in the web inbox (docs/inbox.md): the grant's definition made from the proposal as the run
 * holds it (as `decide --grant-for` makes it), checked against the policy before anything is signed, and what the
 * grant will cover in words, which the page shows the approver before their passkey signs it. Kept apart from the
 * server's routes so the grant's making and its words are one small module.
 */
import { BadInputError } from '../contracts/errors';
import { grantDefinitionFor, refuseGrantUnderPolicy } from '../client/grants';
import type { GrantDefinition } from '../contracts/grant';
import type { CompliancePolicy } from '../contracts/policy';
import type { ProposalRecord } from '../contracts/status';
import { describeGrantScope } from '../contracts/grant-scope';
import type { GrantChoice } from './requests';

/** A grant the inbox cannot make as asked: the HTTP status and the message the person reads. */
export class GrantFormRefusal extends BadInputError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The grant an approver asked for, made from the proposal and bounded by the policy (its tiers, lifetime and uses,
 * and that it never widens code), with its coverage in words. Throws {@link GrantFormRefusal} naming the field and
 * the rule; nothing is signed then.
 */
export function grantFromForm(
  policy: CompliancePolicy,
  status: ProposalRecord,
  approver: string,
  choice: GrantChoice,
  reason: string,
): { definition: GrantDefinition; coverage: string } {
  const patterned = (choice.same?.length ?? 0) > 0 || choice.under !== undefined;
  const sessionId = status.proposal.session_id;
  if (choice.this_session && sessionId === undefined)
    throw new GrantFormRefusal(400, 'grant.this_session: this proposal carries no session id (only hook calls do)');
  let definition: GrantDefinition;
  try {
    definition = grantDefinitionFor(status.proposal, {
      approver,
      lifetimeMs: choice.minutes * 60_000,
      maxUses: choice.uses,
      scope: patterned ? { kind: 'pattern', same: choice.same, under: choice.under } : { kind: 'identical' },
      ...(reason ? { reason: reason.slice(0, 1024) } : {}),
      originWorkflowId: status.workflow_id,
      ...(choice.this_session ? { sessionId } : {}),
    });
  } catch (err) {
    const message = (err as Error).message;
    throw new GrantFormRefusal(400, message.startsWith('grant') ? message : `grant.${message}`);
  }
  const refusal = refuseGrantUnderPolicy(policy, definition);
  if (refusal) throw new GrantFormRefusal(400, `grant: ${refusal.reason}`);
  return { definition, coverage: describeGrantScope(definition, status.proposal) };
}
