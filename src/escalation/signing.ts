/**
 * Signed human decisions. The approver id in a decision is only a claim; anyone who can reach the
 * Temporal namespace could send `{"approver":"scott"}`. When the policy gives an approver a public
 * key (or a bot key for `discord:` approvers), the workflow accepts that approver's decision only
 * with a valid Ed25519 signature over the decision bound to this workflow, made in the last few
 * minutes. Pure JavaScript (@noble/curves): the workflow verifies it itself.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { canonicalJson } from '../circles/crypto';
import { fromBase64Url, utf8 } from '../circles/encoding';
import type { HumanDecision } from '../contracts/messages';
import type { CompliancePolicy } from '../contracts/policy';

/** How far a signature's time may be from workflow time. */
export const DECISION_SIGNATURE_WINDOW_MS = 5 * 60_000;

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
  return utf8(`agent-judge/human-decision/v1\n${canonicalJson(statement)}`);
}

/** The key that must sign this approver's decisions, or null when the policy names none. */
export function signingKeyFor(policy: CompliancePolicy, approver: string): string | null {
  const { approverKeys, discordBotKey } = policy.spec.escalation;
  if (approverKeys[approver]) return approverKeys[approver];
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
  const at = Date.parse(s.signed_at);
  if (!Number.isFinite(at) || Math.abs(nowMs - at) > DECISION_SIGNATURE_WINDOW_MS) {
    return 'the decision signature is stale or from the future; sign it again';
  }
  try {
    const sig = fromBase64Url(s.value);
    const pub = fromBase64Url(key);
    if (!sig || sig.length !== 64 || !pub || pub.length !== 32) return 'the decision signature is malformed';
    const ok = ed25519.verify(sig, decisionSigningBytes(workflowId, d, s.signed_at, s.nonce), pub, { zip215: false });
    return ok ? null : `the decision signature does not verify against ${d.approver}'s key`;
  } catch {
    return 'the decision signature is malformed';
  }
}
