/**
 * Passkeys (WebAuthn credentials) of approvers, and the assertion a passkey-signed decision carries. Text forms only,
 * no curve arithmetic: the human-decision schema the proposal workflow parses imports this module (see
 * identity-text.ts). Verification is `identity/passkey-verify.ts`; docs/inbox.md describes the whole flow.
 */
import { z } from 'zod';
import { fromBase64Url } from './encoding';
import { B64URL } from './identity-text';

/** The COSE algorithms a registered passkey may use: ES256 (-7, P-256) and EdDSA (-8, Ed25519). */
export const PASSKEY_ALGORITHMS = ['ES256', 'EdDSA'] as const;
export type PasskeyAlgorithm = (typeof PASSKEY_ALGORITHMS)[number];

/** Unpadded base64url of at most `maxBytes` bytes. */
function b64url(what: string, maxBytes: number) {
  return z
    .string()
    .min(1)
    .max(Math.ceil((maxBytes * 4) / 3))
    .regex(B64URL, `expected ${what} as unpadded base64url`)
    .refine((t) => fromBase64Url(t) !== null, `expected ${what} as canonical unpadded base64url`);
}

/** A WebAuthn origin: `https://host[:port]`, or `http://` for a loopback host only (what browsers allow). */
export const WebAuthnOriginSchema = z
  .string()
  .max(512)
  .regex(
    /^(https:\/\/[a-z0-9.-]+(:\d{1,5})?|http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?)$/,
    'expected an origin such as https://inbox.example.org (http:// only for localhost or 127.0.0.1), no path',
  );

/**
 * One approver's registered passkey: the credential id the authenticator names in its assertions, the algorithm and
 * raw public key (ES256: the uncompressed P-256 point, 65 bytes starting 0x04; EdDSA: 32 bytes), and the relying party
 * it was made for (the rp id whose SHA-256 the authenticator data carries; the origins clientDataJSON may name).
 */
export const PasskeyCredentialSchema = z
  .strictObject({
    id: b64url('a credential id', 1023),
    alg: z.enum(PASSKEY_ALGORITHMS),
    public_key: b64url('a raw public key', 65),
    rp_id: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[a-z0-9.-]+$/, 'expected a host name such as inbox.example.org or localhost'),
    origins: z.array(WebAuthnOriginSchema).min(1).max(10),
    enrolled_at: z.iso.datetime().optional(),
    /** What the approver called it at enrolment ("phone"), shown in listings only. */
    name: z.string().max(100).optional(),
  })
  .refine((c) => {
    const key = fromBase64Url(c.public_key);
    if (!key) return false;
    return c.alg === 'ES256' ? key.length === 65 && key[0] === 0x04 : key.length === 32;
  }, 'public_key: expected 65 bytes starting 0x04 for ES256, 32 bytes for EdDSA');
export type PasskeyCredential = z.infer<typeof PasskeyCredentialSchema>;

/** Approver id -> their passkeys (the policy's `escalation.approverPasskeys`, and the registry file's `approvers`). */
export const ApproverPasskeysSchema = z.record(
  z.string().regex(/^[A-Za-z0-9@][A-Za-z0-9@._:-]{0,127}$/, 'expected an approver id such as scott'),
  z.array(PasskeyCredentialSchema).max(20),
);
export type ApproverPasskeys = z.infer<typeof ApproverPasskeysSchema>;

/** The passkey registry file (AGENT_JUDGE_PASSKEYS) the inbox writes and the workflow worker reads. */
export const PasskeyRegistrySchema = z.strictObject({
  version: z.literal(1),
  approvers: ApproverPasskeysSchema,
});
export type PasskeyRegistry = z.infer<typeof PasskeyRegistrySchema>;

/**
 * A WebAuthn assertion as a decision's signature: what `navigator.credentials.get` returned, each field unpadded
 * base64url. The challenge inside clientDataJSON is the decision's digest (identity/passkey-verify.ts).
 */
export const WebAuthnAssertionSchema = z.strictObject({
  credential_id: b64url('a credential id', 1023),
  authenticator_data: b64url('authenticator data', 1024),
  client_data_json: b64url('clientDataJSON', 2048),
  signature: b64url('an assertion signature', 128),
});
export type WebAuthnAssertion = z.infer<typeof WebAuthnAssertionSchema>;
