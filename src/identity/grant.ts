/**
 * Signed grants, verification side: a grant is a decision too, so it is signed by the approver's own key exactly as
 * a decision is (the same keys, the same freshness window, the same `requireSignedDecisions` rule), over the whole
 * definition (agent, action type, match, uses, expiry). Pure: the grant workflow verifies it itself. Signing is in
 * `sign-grant.ts`.
 */
import type { GrantDefinition, GrantRequest } from '../contracts/grant';
import type { CompliancePolicy } from '../contracts/policy';
import { refusal, type Refusal } from '../contracts/refusal';
import { passkeysFor, signingKeyFor } from './decision';
import { assertionChallenge, refusePasskeyAssertion } from './passkey-verify';
import { checkSignature, staleness, statementBytes } from './verify';

/** The domain tag of a grant statement: a grant signature never passes as a decision's, nor the other way. */
export const GRANT_TAG = 'agent-judge/grant/v1';

/** The exact bytes signed: the domain tag, then the definition, the signing time and the nonce, canonically. */
export function grantSigningBytes(definition: GrantDefinition, signedAt: string, nonce: string): Uint8Array {
  return statementBytes(GRANT_TAG, { definition, signed_at: signedAt, nonce });
}

/**
 * The WebAuthn challenge of a passkey-signed grant: the SHA-256 of the exact statement an Ed25519 grant signature
 * signs (the definition, the signing time, the nonce). The inbox asks the browser for an assertion over it; the grant
 * workflow recomputes it from the definition it was started with.
 */
export function grantChallenge(definition: GrantDefinition, signedAt: string, nonce: string): string {
  return assertionChallenge(grantSigningBytes(definition, signedAt, nonce));
}

/**
 * Why the grant's signature is not acceptable under `policy`, or null. The grant's approver must be one the policy
 * lists; with a key or a passkey for them, the signature (Ed25519, or a passkey's assertion over
 * {@link grantChallenge}) must verify and be fresh; without either, the grant is accepted only where unsigned
 * decisions are. A grant id starts once (the workflow's check), so an assertion is good for one grant. Never throws.
 */
export function refuseGrantSignature(policy: CompliancePolicy, request: GrantRequest, nowMs: number): Refusal | null {
  const { definition: d, signature: s } = request;
  if (!policy.spec.escalation.approvers.includes(d.approver))
    return refusal('not-approver', `${d.approver} is not an approver of this policy (spec.escalation.approvers)`);
  const key = signingKeyFor(policy, d.approver);
  const passkeys = passkeysFor(policy, d.approver);
  if (!key && passkeys.length === 0) {
    return policy.spec.escalation.requireSignedDecisions
      ? refusal(
          'unsigned',
          `grants must be signed, and the policy has no key or passkey for ${d.approver} ` +
            '(spec.escalation.approverKeys, or a passkey enrolled in the inbox)',
        )
      : null;
  }
  if (!s)
    return key
      ? refusal('unsigned', `${d.approver} must sign grants (agent-judge grants create --key <key file>)`)
      : refusal('unsigned', `${d.approver} must sign grants with their passkey (in the approval inbox)`);
  const stale = staleness(Date.parse(s.signed_at), nowMs);
  if (stale !== null) return refusal('stale', `the grant signature ${stale}; sign it again`);
  const statement = grantSigningBytes(d, s.signed_at, s.nonce);
  if (s.webauthn) {
    if (passkeys.length === 0)
      return refusal('unknown-key', `${d.approver} has no registered passkey; sign the grant with their key instead`);
    return refusePasskeyAssertion(statement, s.webauthn, passkeys, d.approver, 'grant');
  }
  if (!key || s.value === undefined)
    return refusal(
      'unknown-key',
      `${d.approver} signs grants with a passkey (in the approval inbox), and has no key in the policy`,
    );
  const check = checkSignature(statement, s.value, key);
  if (check === 'malformed') return refusal('malformed', 'the grant signature is malformed');
  if (check !== 'ok')
    return refusal('bad-signature', `the grant signature does not verify against ${d.approver}'s key`);
  return null;
}
