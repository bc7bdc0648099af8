/**
 * The text forms of identities that need no curve arithmetic: AMIDs, private keys, signatures and nonces as strings.
 * Apart from `identity.ts` so that the human-decision schema, which the proposal workflow parses, does not load the
 * curve library on every run (the SDK evaluates a workflow's modules afresh for each run; docs/performance.md).
 */
import { z } from 'zod';

/** Raw Ed25519 public keys are 32 bytes; signatures 64. */
export const PUBLIC_KEY_BYTES = 32;
export const SIGNATURE_BYTES = 64;

/** `amid:` + 40 hex characters: the first 160 bits of SHA-256 over the raw public key. */
export const AMID_PATTERN = /^amid:[0-9a-f]{40}$/;

/** Unpadded base64url text, the form every key and signature travels in. */
export const B64URL = /^[A-Za-z0-9_-]+$/;

/** An agent's id, derived from its key (see `identity/verify.ts`), so nobody can claim another's. */
export const AmidSchema = z
  .string()
  .regex(AMID_PATTERN, 'expected an AMID: "amid:" followed by 40 lowercase hex characters');

export const PrivateKeySchema = z
  .string()
  .length(43, 'expected an Ed25519 private key: the 32-byte seed as unpadded base64url (43 characters)')
  .regex(B64URL, 'expected unpadded base64url');

export const SignatureSchema = z
  .string()
  .length(86, 'expected an Ed25519 signature: 64 bytes as unpadded base64url (86 characters)')
  .regex(B64URL, 'expected unpadded base64url');

/** A single-use value inside a signed statement; the verifier records it to refuse replays. */
export const NonceSchema = z.string().regex(/^[A-Za-z0-9_-]{16,64}$/, 'expected 16-64 base64url characters');
