/**
 * The verification side of every signature agent-judge checks (circle statements, operator
 * actions, human decisions): one Ed25519 verifier, one freshness window, one byte layout for
 * domain-tagged statements. Pure JavaScript (`@noble/curves`, audited), so the registry and
 * proposal workflows verify signatures themselves, deterministically, inside the Temporal sandbox.
 * Signing lives in `keys.ts` (node:crypto); workflow code must never import that one.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { canonicalJson } from '../contracts/canonical-json';
import { fromBase64Url, toHex, utf8 } from '../contracts/encoding';
import { decodePublicKey, PUBLIC_KEY_BYTES, SIGNATURE_BYTES } from '../contracts/identity';

/** How far an operator's or approver's signing time may be from the verifier's time. */
export const SIGNATURE_WINDOW_MS = 5 * 60_000;

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
 * The exact bytes signed for a statement: its domain tag, a newline, its canonical JSON. The tag
 * names what the signature is for, so a signature made for one purpose never passes as another.
 */
export function statementBytes(domainTag: string, statement: object): Uint8Array {
  return utf8(`${domainTag}\n${canonicalJson(statement)}`);
}

/** What checking a signature found: `ok`, a value that cannot be a key or signature, or a mismatch. */
export type SignatureCheck = 'ok' | 'malformed' | 'does-not-verify';

/**
 * Checks an Ed25519 `signature` (unpadded base64url, 64 bytes) by `publicKey` over `bytes`.
 * Strict RFC 8032 (no ZIP-215 leniency), so verifiers agree with OpenSSL-based signers. Never
 * throws. Keys are not curve-checked here: they were when they entered (policy load, registration),
 * and `verify` itself refuses non-points.
 */
export function checkSignature(bytes: Uint8Array, signature: string, publicKey: string): SignatureCheck {
  try {
    const sig = fromBase64Url(signature);
    const key = fromBase64Url(publicKey);
    if (!sig || sig.length !== SIGNATURE_BYTES || !key || key.length !== PUBLIC_KEY_BYTES) return 'malformed';
    return ed25519.verify(sig, bytes, key, { zip215: false }) ? 'ok' : 'does-not-verify';
  } catch {
    return 'malformed';
  }
}

/** True when `signature` is a valid signature by `publicKey` over `bytes` (see {@link checkSignature}). */
export function verifySignature(bytes: Uint8Array, signature: string, publicKey: string): boolean {
  return checkSignature(bytes, signature, publicKey) === 'ok';
}

/**
 * Null when a signature made at `signedAtMs` is fresh at `nowMs` (within `windowMs` either way),
 * otherwise why not, as a phrase to follow the statement's name ("signed at ... is 400s old; the
 * freshness window is 300s"). The one freshness rule: captured signatures expire, and a clock
 * slightly ahead is tolerated as much as one slightly behind.
 */
export function staleness(signedAtMs: number, nowMs: number, windowMs: number = SIGNATURE_WINDOW_MS): string | null {
  if (!Number.isFinite(signedAtMs)) return 'has no valid signing time';
  const skew = nowMs - signedAtMs;
  if (Math.abs(skew) <= windowMs) return null;
  const direction = skew > 0 ? 'old' : 'in the future';
  const seconds = Math.round(Math.abs(skew) / 1000);
  return `signed at ${isoTime(signedAtMs)} is ${seconds}s ${direction}; the freshness window is ${windowMs / 1000}s`;
}

/** ISO 8601 when the time is representable, else the raw number (a `Date` past year 275760 throws). */
function isoTime(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
}
