/**
 * The wire forms of identities: Ed25519 public keys, private keys, signatures, nonces, AMIDs and
 * key files. Policies, circle statements, operator signatures and human decisions all parse with
 * these, so a key that is not a usable curve point is refused where it enters, naming the field.
 * Pure JavaScript (`@noble/curves`): workflow code may import it.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { z } from 'zod';
import { fromBase64Url } from './encoding';

/** Raw Ed25519 public keys are 32 bytes; signatures 64. */
export const PUBLIC_KEY_BYTES = 32;
export const SIGNATURE_BYTES = 64;

/** `amid:` + 40 hex characters: the first 160 bits of SHA-256 over the raw public key. */
export const AMID_PATTERN = /^amid:[0-9a-f]{40}$/;

const B64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The raw 32 bytes of a public key, or null unless it is a canonical curve point outside the
 * small-order subgroup. Small-order keys are refused (as libsodium does): with one, signatures can
 * be forged without any private key, so whoever holds the policy or registry slot could hand out an
 * identity anyone can sign as.
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

/** An agent's id, derived from its key (see `identity/verify.ts`), so nobody can claim another's. */
export const AmidSchema = z
  .string()
  .regex(AMID_PATTERN, 'expected an AMID: "amid:" followed by 40 lowercase hex characters');

/** An Ed25519 public key that can actually verify: 32 bytes, canonical, not small-order. */
export const PublicKeySchema = z
  .string()
  .length(43, 'expected an Ed25519 public key: 32 bytes as unpadded base64url (43 characters)')
  .regex(B64URL, 'expected unpadded base64url')
  .refine(
    (k) => decodePublicKey(k) !== null,
    'not a valid Ed25519 public key (expected a curve point outside the small-order subgroup)',
  );

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

/** What `circles keygen` prints and what `--key` / `--parent-key` / `--operator-key` files contain. */
export const KeyFileSchema = z.object({
  amid: AmidSchema,
  public_key: PublicKeySchema,
  private_key: PrivateKeySchema,
});
export type KeyFile = z.infer<typeof KeyFileSchema>;
