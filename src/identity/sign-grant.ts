/** Signs grants, for the CLI (`grants create --key`, `decide --grant --key`). Node only; verification is grant.ts. */
import type { KeyFile } from '../contracts/identity';
import type { GrantDefinition, GrantRequest } from '../contracts/grant';
import type { WebAuthnAssertion } from '../contracts/passkey';
import { grantChallenge, grantSigningBytes } from './grant';
import { newNonce, signBytes } from './keys';

/** The grant workflow's input: the definition signed by the approver's key file. */
export function signGrant(definition: GrantDefinition, key: KeyFile, now = new Date()): GrantRequest {
  const signedAt = now.toISOString();
  const nonce = newNonce();
  const value = signBytes(grantSigningBytes(definition, signedAt, nonce), key.private_key);
  return { definition, signature: { signed_at: signedAt, nonce, value } };
}

/**
 * What a passkey signs for a grant: a fresh signing time and nonce, and the WebAuthn challenge (the digest of the
 * grant statement) to ask the authenticator for. {@link withGrantPasskeyAssertion} then makes the signed request.
 */
export function grantPasskeyChallenge(
  definition: GrantDefinition,
  now = new Date(),
): { signed_at: string; nonce: string; challenge: string } {
  const signedAt = now.toISOString();
  const nonce = newNonce();
  return { signed_at: signedAt, nonce, challenge: grantChallenge(definition, signedAt, nonce) };
}

/** The grant workflow's input signed by a passkey's assertion over {@link grantPasskeyChallenge}'s challenge. */
export function withGrantPasskeyAssertion(
  definition: GrantDefinition,
  signed: { signed_at: string; nonce: string },
  assertion: WebAuthnAssertion,
): GrantRequest {
  return { definition, signature: { signed_at: signed.signed_at, nonce: signed.nonce, webauthn: assertion } };
}
