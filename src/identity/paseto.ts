/**
 * PASETO v4.public signing (the verification side is `paseto-verify.ts`, re-exported here). For
 * the workflow worker's issuing activity, benchmarks and tests: Ed25519 from `@noble/curves`, the
 * library every other signature here uses, so signer and verifier cannot disagree on encoding.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { toBase64Url, utf8 } from '../contracts/encoding';
import { pae, V4_PUBLIC_HEADER } from './paseto-verify';

export { pae, parseV4Public, PasetoError, unverifiedFooter, V4_PUBLIC_HEADER, verifyV4Public } from './paseto-verify';
export type { V4PublicParts } from './paseto-verify';

/**
 * Signs `message` (the claims' JSON bytes) with a 32-byte Ed25519 seed; a non-empty `footer` is
 * appended authenticated but unencrypted. Deterministic: the same inputs give the same token.
 * `sign` may replace @noble/curves with an equivalent Ed25519 signer for the same seed (the
 * worker passes node:crypto's, ~8x cheaper per token); Ed25519 is deterministic, so the token
 * is byte for byte the same.
 */
export function signV4Public(
  message: Uint8Array,
  seed: Uint8Array,
  footer: Uint8Array = new Uint8Array(0),
  implicitAssertion: Uint8Array = new Uint8Array(0),
  sign: (m2: Uint8Array) => Uint8Array = (m2) => ed25519.sign(m2, seed),
): string {
  if (seed.length !== 32) throw new TypeError('PASETO v4.public: the secret key seed must be 32 bytes');
  const m2 = pae([utf8(V4_PUBLIC_HEADER), message, footer, implicitAssertion]);
  const signature = sign(m2);
  const body = new Uint8Array(message.length + signature.length);
  body.set(message, 0);
  body.set(signature, message.length);
  const token = `${V4_PUBLIC_HEADER}${toBase64Url(body)}`;
  return footer.length > 0 ? `${token}.${toBase64Url(footer)}` : token;
}
