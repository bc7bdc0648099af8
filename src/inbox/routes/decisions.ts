/**
 * Deciding a proposal: a challenge for the approver's passkey over the exact decision (and, with "approve and grant",
 * a second one over the grant), then the signed decision relayed as the `humanDecision` Update. The inbox holds no key
 * that can decide; the workflow verifies the assertion.
 */
import type { Express } from 'express';
import { createGrant } from '../../client/grants';
import { decide, decisionBindingOf, getStatus } from '../../client/proposals';
import { applyActionEdits } from '../../contracts/action-edit';
import type { GrantDefinition, GrantRequest, GrantStatus } from '../../contracts/grant';
import type { HumanDecision } from '../../contracts/messages';
import type { DecisionBinding } from '../../identity/decision';
import { refuseGrantSignature } from '../../identity/grant';
import { readPasskeyRegistry, withPasskeys } from '../../identity/passkey-registry';
import { passkeyChallenge, withPasskeyAssertion } from '../../identity/sign-decision';
import { grantPasskeyChallenge, withGrantPasskeyAssertion } from '../../identity/sign-grant';
import type { InboxContext } from '../context';
import { whyCannotDecide } from '../decidable';
import { GrantFormRefusal, grantFromForm } from '../grant-form';
import { HttpRefusal } from '../http-refusal';
import { outcomeText } from '../pages';
import { DecideRequestSchema, DecisionRequestSchema, readRequest } from '../requests';
import type { Session } from '../sessions';

/** Pending decision challenges: what the passkey is asked to sign, kept until the assertion comes back. */
interface PendingDecision {
  workflowId: string;
  decision: HumanDecision;
  binding: DecisionBinding;
  signed_at: string;
  nonce: string;
  /** With "approve and grant": the grant's definition and what the passkey signs for it (a second assertion). */
  grant?: { definition: GrantDefinition; signed_at: string; nonce: string; challenge: string; coverage: string };
}

export function registerDecisionRoutes(app: Express, ctx: InboxContext): void {
  const {
    client,
    policy,
    registryPath,
    logger,
    taskQueue,
    sessions,
    ownPasskeyIds,
    signedIn,
    statusForListing,
    workflowIdOf,
  } = ctx;
  app.post('/p/:workflowId/challenge', async (req, res) => {
    const approver = signedIn(res);
    const workflowId = workflowIdOf(req);
    const read = readRequest(DecisionRequestSchema, req.body);
    if (!read.ok) throw new HttpRefusal(400, read.refusal.reason);
    const body = read.value;
    const reason = body.reason?.trim() ?? '';
    const status = await statusForListing(workflowId);
    if (!status) throw new HttpRefusal(404, `no proposal with workflow id ${workflowId}, or its workers do not answer`);
    if (status.stage !== 'awaiting_human')
      throw new HttpRefusal(409, `this proposal is no longer waiting for a decision: ${outcomeText(status)}`);
    if (status.decisions.some((d) => d.approver === approver))
      throw new HttpRefusal(409, 'you have already decided this proposal');
    const cannot = whyCannotDecide(status, approver);
    if (cannot) throw new HttpRefusal(409, cannot);
    // Edits are checked here with the function the workflow runs (the table, the action type's schema), so a refused
    // edit names its field and rule and nothing is signed or sent.
    if (body.edits) {
      const edited = applyActionEdits(status.proposal, body.edits);
      if (!edited.ok) throw new HttpRefusal(400, edited.refusal.reason);
    }
    const decision: HumanDecision = {
      decision: body.decision,
      approver,
      via: 'inbox',
      ...(reason ? { reason } : {}),
      ...(body.edits ? { edits: body.edits } : {}),
    };
    // A grant is made from the proposal as the run holds it, and bounded by the policy before anything is signed;
    // the page shows its coverage in words and the passkey signs only once the approver has seen them.
    let grant: PendingDecision['grant'];
    if (body.grant) {
      let made;
      try {
        made = grantFromForm(policy, status, approver, body.grant, reason);
      } catch (err) {
        if (err instanceof GrantFormRefusal) throw new HttpRefusal(err.status, err.message);
        throw err;
      }
      grant = { ...made, ...grantPasskeyChallenge(made.definition) };
    }
    const binding = await decisionBindingOf(client, workflowId, body.edits);
    const c = passkeyChallenge(binding, decision);
    const pending: PendingDecision = {
      workflowId,
      decision,
      binding,
      signed_at: c.signed_at,
      nonce: c.nonce,
      ...(grant ? { grant } : {}),
    };
    sessions.issue(res.locals.session as Session, c.challenge, pending);
    res.json({
      challenge: c.challenge,
      allow: ownPasskeyIds(approver),
      decision: decision.decision,
      reason: decision.reason ?? null,
      edited_sha256: binding.editedSha256 ?? null,
      grant: grant ? { challenge: grant.challenge, definition: grant.definition, coverage: grant.coverage } : null,
    });
  });

  app.post('/p/:workflowId/decide', async (req, res) => {
    const approver = signedIn(res);
    const workflowId = workflowIdOf(req);
    const raw = (req.body ?? {}) as { challenge?: unknown };
    // The challenge is taken first, whatever else is wrong: a signed decision is offered once.
    const pending = sessions.take<PendingDecision>(res.locals.session as Session, raw.challenge);
    if (!pending || pending.workflowId !== workflowId)
      throw new HttpRefusal(
        400,
        'refused: this signed decision was not requested here, was already used, or took too long; decide again',
      );
    const read = readRequest(DecideRequestSchema, req.body);
    if (!read.ok) throw new HttpRefusal(400, read.refusal.reason);
    const body = read.value;
    let grantRequest: GrantRequest | undefined;
    if (pending.grant) {
      if (!body.grant_assertion)
        throw new HttpRefusal(400, "grant_assertion: required: the passkey's assertion over the grant's challenge");
      grantRequest = withGrantPasskeyAssertion(pending.grant.definition, pending.grant, body.grant_assertion);
      // Checked here too (the grant workflow is the authority), so a bad grant signature decides nothing.
      const refusal = refuseGrantSignature(
        withPasskeys(policy, readPasskeyRegistry(registryPath).approvers),
        grantRequest,
        Date.now(),
      );
      if (refusal) throw new HttpRefusal(400, `grant: ${refusal.reason}; nothing was decided`);
    } else if (body.grant_assertion) throw new HttpRefusal(400, 'grant_assertion: no grant was asked for');
    const signed = withPasskeyAssertion(pending.binding, pending.decision, pending, body.assertion);
    let outcome;
    try {
      outcome = await decide(client, workflowId, signed);
    } catch (err) {
      throw new HttpRefusal(409, `Not accepted: ${(err as Error).message}`);
    }
    logger.info(
      { approver, decision: pending.decision.decision, workflow_id: workflowId, edits: !!pending.decision.edits },
      'decision relayed',
    );
    let granted: GrantStatus | undefined;
    let grantRefusal: string | undefined;
    if (grantRequest) {
      try {
        granted = await createGrant(client, grantRequest, { taskQueue });
        logger.info({ approver, grant_id: granted.definition.grant_id, workflow_id: workflowId }, 'grant made');
      } catch (err) {
        grantRefusal = (err as Error).message;
      }
    }
    const after = await getStatus(client, workflowId).catch(() => null);
    res.json({
      status: outcome.status,
      message: after ? outcomeText(after) : outcome.status,
      ...(granted
        ? {
            grant: {
              grant_id: granted.definition.grant_id,
              max_uses: granted.definition.max_uses,
              expires_at: granted.definition.expires_at,
            },
          }
        : {}),
      ...(grantRefusal ? { grant_refusal: `The decision was recorded, but not the grant: ${grantRefusal}` } : {}),
    });
  });
}
