/**
 * One workflow per scoped grant (docs/grants.md), id `grant-<grant_id>`: it verifies the approver's signature and
 * the policy's bounds once at start, then answers `useGrant` Updates from proposal runs (a synchronous validator
 * refuses a use that is expired, used up, revoked, already counted or not covered, before anything reaches history),
 * takes `revokeGrant`, and closes at its expiry, its last use or its revocation. Its history is the grant's audit
 * trail: every use names the proposal it approved.
 */
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { WorkflowActivities } from '../activities/types';
import type { GrantNotice } from '../contracts/escalation';
import { GrantRequestSchema, GrantRevocationSchema, GrantUseSchema, type GrantStatus } from '../contracts/grant';
import { FailureType } from '../contracts/lifecycle';
import { refusal } from '../contracts/refusal';
import { describeIssues } from '../contracts/zod-error';
import { refuseGrantSignature } from '../identity/grant';
import { refuseGrantByPolicy } from '../policy/grants';
import { tierFor } from '../policy/classify';
import { grantStatusQuery, grantWorkflowId, revokeGrantUpdate, useGrantUpdate } from '../names';
import { readUpdateInput } from './update-input';
import { refusalFailure } from './refusal';
import { GrantRecord } from './grant-state';

const local = proxyLocalActivities<WorkflowActivities>({ startToCloseTimeout: '10s' });
/** A use or a revocation that arrives with the start, before the grant has checked itself. */
const STARTING = refusal('starting', 'the grant is still starting');
/** Showing the grant in chat: best effort (the activity never throws), given time to wait for the decision's edit. */
const announce = proxyLocalActivities<WorkflowActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 1 },
});

export async function grantWorkflow(input: unknown): Promise<GrantStatus> {
  const parsed = GrantRequestSchema.safeParse(input);
  if (!parsed.success)
    throw ApplicationFailure.nonRetryable(describeIssues('grant', parsed.error.issues), FailureType.BadInput);
  const request = parsed.data;
  const { definition } = request;
  if (workflowInfo().workflowId !== grantWorkflowId(definition.grant_id))
    throw ApplicationFailure.nonRetryable(
      `workflow id ${workflowInfo().workflowId} is not ${grantWorkflowId(definition.grant_id)}; start grants with ` +
        'agent-judge grants create or createGrant',
      FailureType.BadInput,
    );

  let grant: GrantRecord | undefined;
  const now = () => new Date(Date.now()).toISOString();
  // Handlers first: a use that arrives with the start is refused ("still starting"), never lost in a missing handler.
  setHandler(grantStatusQuery, () => {
    if (!grant) throw new Error('the grant is still starting; ask again in a moment');
    return grant.status(Date.now());
  });
  setHandler(useGrantUpdate, (use) => grant!.use(readUpdateInput(GrantUseSchema, 'grant use', use), now()), {
    validator: (use) => {
      const u = readUpdateInput(GrantUseSchema, 'grant use', use);
      if (!grant) throw refusalFailure(STARTING);
      const refused = grant.refusal ?? grant.refuseUse(u, Date.now());
      if (refused) throw refusalFailure(refused);
    },
  });
  setHandler(
    revokeGrantUpdate,
    (revocation) => {
      grant!.revoke(readUpdateInput(GrantRevocationSchema, 'revocation', revocation), now());
      return grant!.status(Date.now());
    },
    {
      validator: (revocation) => {
        readUpdateInput(GrantRevocationSchema, 'revocation', revocation);
        if (!grant) throw refusalFailure(STARTING);
        const refused = grant.refuseRevocation(Date.now());
        if (refused) throw refusalFailure(refused);
      },
    },
  );

  const { policy, earlierRuns } = await local.grantPolicySnapshot({ workflow_id: workflowInfo().workflowId });
  const record = new GrantRecord(definition, policy);
  // A signed grant starts once: a second run under its id (after a revocation, say) would bring it back.
  record.refusal =
    (earlierRuns > 0
      ? refusal('grant.ran', `grant ${definition.grant_id} already ran; a grant id starts once`)
      : null) ??
    refuseGrantSignature(policy, request, Date.now()) ??
    refuseGrantByPolicy(policy, definition, tierFor(policy, definition.action_type));
  grant = record;
  // Refused: the run ends at once with the reason as its result (nothing failed: the grant was simply not given).
  if (record.refusal !== null) {
    await condition(allHandlersFinished);
    return record.status(Date.now());
  }

  // Made while deciding an escalated proposal: that proposal's chat message shows the grant and a way to revoke it,
  // and, once it has ended, how it ended.
  const origin = definition.origin_workflow_id;
  const notice: GrantNotice | null = origin
    ? {
        grant_id: definition.grant_id,
        origin_workflow_id: origin,
        approver: definition.approver,
        agent_id: definition.agent_id,
        action_type: definition.action_type,
        covers: definition.match.kind === 'identical' ? 'the identical action' : 'calls matching its pattern',
        max_uses: definition.max_uses,
        expires_at: definition.expires_at,
        approvers: policy.spec.escalation.approvers,
      }
    : null;
  if (notice) await announce.announceGrant(notice);

  const lifeMs = Math.max(0, record.expiresAtMs - Date.now());
  await condition(() => record.state(Date.now()) !== 'live', lifeMs);
  await condition(allHandlersFinished);
  const final = record.status(Date.now());
  if (notice && final.state !== 'live' && final.state !== 'refused')
    await announce.announceGrant({
      ...notice,
      ended: {
        state: final.state,
        uses: final.uses.length,
        ...(final.revoked ? { by: final.revoked.by, at: final.revoked.at } : {}),
      },
    });
  return final;
}
