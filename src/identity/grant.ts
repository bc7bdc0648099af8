/**
 * Signed grants, verification side: a grant is a decision too, so it is signed by the approver's own key exactly as
 * a decision is (the same keys, the same freshness window, the same `requireSignedDecisions` rule), over the whole
 * definition (agent, action type, match, uses, expiry). Pure: the grant workflow verifies it itself. Signing is in
 * `sign-grant.ts`.
 */
import type { GrantDefinition, GrantRequest } from '../contracts/grant';
import type { CompliancePolicy } from '../contracts/policy';
import { signingKeyFor } from './decision';
import { checkSignature, staleness, statementBytes } from './verify';

/** The domain tag of a grant statement: a grant signature never passes as a decision's, nor the other way. */
export const GRANT_TAG = 'agent-judge/grant/v1';

/** The exact bytes signed: the domain tag, then the definition, the signing time and the nonce, canonically. */
export function grantSigningBytes(definition: GrantDefinition, signedAt: string, nonce: string): Uint8Array {
  return statementBytes(GRANT_TAG, { definition, signed_at: signedAt, nonce });
}

/**
 * Why the grant's signature is not acceptable under `policy`, or null. The grant's approver must be one the policy
 * lists; with a key for them, the signature must verify and be fresh; without one, the grant is accepted only where
 * unsigned decisions are. Never throws.
 */
export function refuseGrantSignature(policy: CompliancePolicy, request: GrantRequest, nowMs: number): string | null {
  const { definition: d, signature: s } = request;
  if (!policy.spec.escalation.approvers.includes(d.approver))
    return `${d.approver} is not an approver of this policy (spec.escalation.approvers)`;
  const key = signingKeyFor(policy, d.approver);
  if (!key) {
    return policy.spec.escalation.requireSignedDecisions
      ? `grants must be signed, and the policy has no key for ${d.approver} (spec.escalation.approverKeys)`
      : null;
  }
  if (!s) return `${d.approver} must sign grants (agent-judge grants create --key <key file>)`;
  const stale = staleness(Date.parse(s.signed_at), nowMs);
  if (stale !== null) return `the grant signature ${stale}; sign it again`;
  const check = checkSignature(grantSigningBytes(d, s.signed_at, s.nonce), s.value, key);
  if (check === 'malformed') return 'the grant signature is malformed';
  if (check !== 'ok') return `the grant signature does not verify against ${d.approver}'s key`;
  return null;
}
