/**
 * Signs human decisions, for the CLI (`decide --key`) and the Discord bot. Node only (node:crypto
 * through `keys.ts`); the proposal workflow verifies with `decision.ts`.
 */
import type { KeyFile } from '../contracts/identity';
import type { HumanDecision } from '../contracts/messages';
import type { WebAuthnAssertion } from '../contracts/passkey';
import { decisionChallenge, decisionSigningBytes, type DecisionBinding } from './decision';
import { newNonce, signBytes } from './keys';

/**
 * Signs a decision for one proposal's content and run with a key file (from `agent-judge circles
 * keygen`). The policy's `escalation.approverKeys` (and `discordBotKey`) say whose decisions must
 * carry one; the workflow verifies it with {@link import('./decision').refuseDecisionSignature}.
 * Callers read the binding from the run they decide on (describe's first execution run id, the
 * status's proposal), never from the person's input.
 */
export function signDecision(
  binding: DecisionBinding,
  decision: HumanDecision,
  key: KeyFile,
  now = new Date(),
): HumanDecision {
  const signedAt = now.toISOString();
  const nonce = newNonce();
  const value = signBytes(decisionSigningBytes(binding, decision, signedAt, nonce), key.private_key);
  const binds = {
    content_sha256: binding.contentSha256,
    run_id: binding.runId,
    ...(binding.editedSha256 !== undefined ? { edited_sha256: binding.editedSha256 } : {}),
  };
  return { ...decision, signature: { signed_at: signedAt, nonce, value, binds } };
}

/**
 * What a passkey signs for a decision: a fresh signing time and nonce, and the WebAuthn challenge (the digest of the
 * decision statement) to ask the authenticator for. {@link withPasskeyAssertion} then makes the signed decision.
 */
export function passkeyChallenge(
  binding: DecisionBinding,
  decision: HumanDecision,
  now = new Date(),
): { signed_at: string; nonce: string; challenge: string } {
  const signedAt = now.toISOString();
  const nonce = newNonce();
  return { signed_at: signedAt, nonce, challenge: decisionChallenge(binding, decision, signedAt, nonce) };
}

/** The decision signed by a passkey's assertion over {@link passkeyChallenge}'s challenge. */
export function withPasskeyAssertion(
  binding: DecisionBinding,
  decision: HumanDecision,
  signed: { signed_at: string; nonce: string },
  assertion: WebAuthnAssertion,
): HumanDecision {
  const binds = {
    content_sha256: binding.contentSha256,
    run_id: binding.runId,
    ...(binding.editedSha256 !== undefined ? { edited_sha256: binding.editedSha256 } : {}),
  };
  return { ...decision, signature: { signed_at: signed.signed_at, nonce: signed.nonce, webauthn: assertion, binds } };
}
