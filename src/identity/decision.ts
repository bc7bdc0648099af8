/**
 * Signed human decisions, verification side. The approver id in a decision is only a claim;
 * anyone who can reach the Temporal namespace could send `{"approver":"scott"}`. When the policy
 * gives an approver a public key (or a bot key for `discord:` approvers), the workflow accepts that
 * approver's decision only with a valid Ed25519 signature over the decision bound to this workflow,
 * made within the signature window. Pure: the proposal workflow verifies it itself. Signing is in
 * `sign-decision.ts`.
 */
import type { HumanDecision } from '../contracts/messages';
import type { CompliancePolicy } from '../contracts/policy';
import { checkSignature, staleness, statementBytes } from './verify';

/** The exact bytes signed: a domain tag, then the decision bound to one workflow, canonically. */
export function decisionSigningBytes(
  workflowId: string,
  d: HumanDecision,
  signedAt: string,
  nonce: string,
): Uint8Array {
  const statement = {
    workflow_id: workflowId,
    decision: d.decision,
    approver: d.approver,
    reason: d.reason ?? null,
    signed_at: signedAt,
    nonce,
  };
  return statementBytes('agent-judge/human-decision/v1', statement);
}

/** The key that must sign this approver's decisions, or null when the policy names none. */
export function signingKeyFor(policy: CompliancePolicy, approver: string): string | null {
  const { approverKeys, discordBotKey } = policy.spec.escalation;
  // Own keys only: an approver id such as `constructor` must not find Object's.
  const own = Object.hasOwn(approverKeys, approver) ? approverKeys[approver] : undefined;
  if (typeof own === 'string') return own;
  if (approver.startsWith('discord:') && discordBotKey) return discordBotKey;
  return null;
}

/** Why a decision's signature is not acceptable now, or null. Never throws. */
export function refuseDecisionSignature(
  policy: CompliancePolicy,
  workflowId: string,
  d: HumanDecision,
  nowMs: number,
): string | null {
  const key = signingKeyFor(policy, d.approver);
  if (!key) {
    return policy.spec.escalation.requireSignedDecisions
      ? `decisions must be signed, and the policy has no key for ${d.approver}`
      : null;
  }
  const s = d.signature;
  if (!s) return `${d.approver} must sign decisions (agent-judge decide --key <key file>)`;
  if (staleness(Date.parse(s.signed_at), nowMs) !== null)
    return 'the decision signature is stale or from the future; sign it again';
  const check = checkSignature(decisionSigningBytes(workflowId, d, s.signed_at, s.nonce), s.value, key);
  if (check === 'malformed') return 'the decision signature is malformed';
  return check === 'ok' ? null : `the decision signature does not verify against ${d.approver}'s key`;
}
