/**
 * `spec.capabilities` of the policy: who may issue capability tokens (seed 000 §8) and how long a
 * token lives. The issuers' public keys are what every performer verifies a token against; the
 * private key stays with the workflow worker. A separate module so the policy schema gains one line.
 */
import { z } from 'zod';
import { durationMs } from './duration';
import { PublicKeySchema } from './identity';

/** A key id as it appears in a token's footer (`kid`) and in `spec.capabilities.issuers`. */
export const CapabilityKeyIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/, 'expected a key id of letters, digits, . _ : - (at most 100)');

const MIN_TTL_MS = 10_000;
const MAX_TTL_MS = 24 * 3_600_000;

function ttlMs(d: number | string): number | null {
  try {
    return durationMs(d);
  } catch {
    return null;
  }
}

/** Capability token settings; defaults give a 10-minute token and no issuer (the workers add theirs). */
export const CapabilitySettingsSchema = z
  .strictObject({
    /** Key id -> Ed25519 public key (unpadded base64url) of each key allowed to sign tokens. */
    issuers: z.record(CapabilityKeyIdSchema, PublicKeySchema).default({}),
    /** How long an issued token may be redeemed (10s to 24h). */
    ttl: z
      .union([
        z.int().positive(),
        z.string().regex(/^\d+(\.\d+)?\s*(ms|s|m|h|d)$/, 'expected a duration such as 30s, 5m, 1h or 7d'),
      ])
      .default('10m')
      .refine((d) => {
        const ms = typeof d === 'number' || /^\d+(\.\d+)?\s*(ms|s|m|h|d)$/.test(d) ? ttlMs(d) : null;
        return ms === null || (ms >= MIN_TTL_MS && ms <= MAX_TTL_MS);
      }, 'expected a duration between 10s and 24h'),
  })
  .default({ issuers: {}, ttl: '10m' });
export type CapabilitySettings = z.infer<typeof CapabilitySettingsSchema>;
