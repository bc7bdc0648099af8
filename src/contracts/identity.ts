/**
 * The wire forms of identities: Ed25519 public keys, private keys, signatures, nonces, AMIDs and
 * key files. Policies, circle statements, operator signatures and human decisions all parse with
 * these, so a key that is not a usable curve point is refused where it enters, naming the field.
 * Pure JavaScript (`@noble/curves`): workflow code may import it.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { z } from 'zod';
import { fromBase64Url } from './encoding';
import { AmidSchema, B64URL, PrivateKeySchema, PUBLIC_KEY_BYTES } from './identity-text';

export {
  AMID_PATTERN,
  AmidSchema,
  NonceSchema,
  PrivateKeySchema,
  PUBLIC_KEY_BYTES,
  SIGNATURE_BYTES,
  SignatureSchema,
} from './identity-text';

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

/** An Ed25519 public key that can actually verify: 32 bytes, canonical, not small-order. */
export const PublicKeySchema = z
  .string()
  .length(43, 'expected an Ed25519 public key: 32 bytes as unpadded base64url (43 characters)')
  .regex(B64URL, 'expected unpadded base64url')
  .refine(
    (k) => decodePublicKey(k) !== null,
    'not a valid Ed25519 public key (expected a curve point outside the small-order subgroup)',
  );

/** What `circles keygen` prints and what `--key` / `--parent-key` / `--operator-key` files contain. */
export const KeyFileSchema = z.object({
  amid: AmidSchema,
  public_key: PublicKeySchema,
  private_key: PrivateKeySchema,
});
export type KeyFile = z.infer<typeof KeyFileSchema>;
