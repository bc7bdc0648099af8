/**
 * Verification side of circle identities: AMID derivation, canonical statements and Ed25519
 * signature checks. Pure JavaScript (`@noble/curves`, audited) so the registry workflow verifies
 * every signature itself, deterministically, inside the Temporal sandbox: the registry never
 * trusts a client's claim that a statement was checked. Signing lives in `keys.ts` (node:crypto).
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { canonicalJson } from '../contracts/canonical-json';
import { fromBase64Url, toHex, utf8 } from './encoding';

/** Raw Ed25519 public keys are 32 bytes; signatures 64. */
export const PUBLIC_KEY_BYTES = 32;
export const SIGNATURE_BYTES = 64;

/** `amid:` + 40 hex characters: the first 160 bits of SHA-256 over the raw public key. */
export const AMID_PATTERN = /^amid:[0-9a-f]{40}$/;

/** What a signature is for. Part of the signed bytes, so a signature for one kind never passes as another. */
export type StatementKind = 'membership' | 'knock' | 'bridge-request' | 'bridge-decision';

/**
 * Derives an agent's AMID from its public key. Binding the id to the key means nobody can
 * register someone else's AMID with their own key.
 */
export function amidFromPublicKey(publicKey: string): string {
  const raw = decodePublicKey(publicKey);
  if (!raw) throw new TypeError('public key: expected 32 bytes as unpadded base64url');
  return `amid:${toHex(sha256(raw)).slice(0, 40)}`;
}

/**
 * The AMID of a key the registry already validated when it was registered. Skips the curve-point
 * check (about 0.25 ms each), which matters when a continued run re-derives 10,000 AMIDs.
 */
export function amidOfRegisteredKey(publicKey: string): string {
  const raw = fromBase64Url(publicKey);
  if (!raw || raw.length !== PUBLIC_KEY_BYTES)
    throw new TypeError('public key: expected 32 bytes as unpadded base64url');
  return `amid:${toHex(sha256(raw)).slice(0, 40)}`;
}

/**
 * The raw 32 bytes of a public key, or null unless it is a canonical curve point outside the
 * small-order subgroup. Small-order keys are refused (as libsodium does): with one, signatures can
 * be forged without any private key, so a parent could hand out an identity anyone can knock as.
 */
export function decodePublicKey(publicKey: string): Uint8Array | null {
  const raw = fromBase64Url(publicKey);
  if (!raw || raw.length !== PUBLIC_KEY_BYTES) return null;
  try {
    const point = ed25519.Point.fromBytes(raw, false);
    return point.isSmallOrder() ? null : raw;
  } catch {
    return null;
  }
}

export { canonicalJson } from '../contracts/canonical-json';

/** The exact bytes that get signed: a domain tag naming the kind, a newline, the canonical JSON. */
export function signingBytes(kind: StatementKind, statement: object): Uint8Array {
  return utf8(`agent-judge/circles/v1/${kind}\n${canonicalJson(statement)}`);
}

/**
 * True when `signature` (unpadded base64url, 64 bytes) is a valid Ed25519 signature by
 * `publicKey` over the statement of that kind. Strict RFC 8032 checks (no ZIP-215 leniency), so
 * the registry agrees with OpenSSL-based signers. Never throws.
 */
export function verifyStatement(kind: StatementKind, statement: object, signature: string, publicKey: string): boolean {
  try {
    const sig = fromBase64Url(signature);
    // Registered keys were fully checked at registration; verify() itself rejects non-points.
    const key = fromBase64Url(publicKey);
    if (!sig || sig.length !== SIGNATURE_BYTES || !key || key.length !== PUBLIC_KEY_BYTES) return false;
    return ed25519.verify(sig, signingBytes(kind, statement), key, { zip215: false });
  } catch {
    return false;
  }
}
