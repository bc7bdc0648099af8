/**
 * Verifies a WebAuthn assertion as the signature of a statement (a human decision): the assertion's challenge must be
 * the SHA-256 of the statement's exact bytes, so the passkey signed that statement and nothing else. Pure JavaScript
 * (`@noble/curves`, `@noble/hashes`), deterministic, so the proposal workflow verifies it itself in the Temporal
 * sandbox, as it verifies Ed25519 decisions. What is checked (WebAuthn Level 3 §7.2, the steps that apply to a
 * credential the relying party already knows):
 *
 * - the credential is one registered for this approver (its id), and its public key verifies the signature over
 *   `authenticatorData || SHA-256(clientDataJSON)` (ES256 as DER, low or high S; EdDSA strict RFC 8032);
 * - clientDataJSON: `type` is `webauthn.get`, `challenge` is base64url(SHA-256(statement)), `origin` is one the
 *   credential was registered for, not cross-origin;
 * - authenticatorData: its rp id hash is SHA-256 of the credential's rp id; user present and user verified are set.
 *
 * The signature counter is not checked: passkeys that sync between devices report 0, and the nonce, the freshness
 * window and the binding to one run already make every assertion single-use.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { p256 } from '@noble/curves/nist.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { fromBase64Url, toBase64Url, utf8 } from '../contracts/encoding';
import { refusal, type Refusal } from '../contracts/refusal';
import type { PasskeyCredential, WebAuthnAssertion } from '../contracts/passkey';

const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;

/** The WebAuthn challenge for a statement: the SHA-256 of its exact bytes, as clientDataJSON names it (base64url). */
export function assertionChallenge(statement: Uint8Array): string {
  return toBase64Url(sha256(statement));
}

/** ASCII text of bytes, or null when a byte is not ASCII (clientDataJSON of real browsers is; no TextDecoder here). */
function ascii(bytes: Uint8Array): string | null {
  let out = '';
  for (const b of bytes) {
    if (b > 0x7e || (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d)) return null;
    out += String.fromCharCode(b);
  }
  return out;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/** The first characters of a credential id, to name it in a refusal. */
function shortId(id: string): string {
  return id.length > 16 ? `${id.slice(0, 16)}…` : id;
}

/**
 * Why `assertion` is not a valid passkey signature by one of `credentials` (the approver's) over `statement`, or null.
 * `who` names the approver in refusals, `what` the statement (a decision, a grant). Never throws.
 */
export function refusePasskeyAssertion(
  statement: Uint8Array,
  assertion: WebAuthnAssertion,
  credentials: readonly PasskeyCredential[],
  who: string,
  what = 'decision',
): Refusal | null {
  const credential = credentials.find((c) => c.id === assertion.credential_id);
  if (!credential)
    return refusal('unknown-key', `passkey ${shortId(assertion.credential_id)} is not registered for ${who}`);
  const authData = fromBase64Url(assertion.authenticator_data);
  const clientDataBytes = fromBase64Url(assertion.client_data_json);
  const signature = fromBase64Url(assertion.signature);
  const publicKey = fromBase64Url(credential.public_key);
  if (!authData || !clientDataBytes || !signature || !publicKey)
    return refusal('malformed', 'the passkey assertion is malformed');
  const text = ascii(clientDataBytes);
  let clientData: unknown;
  try {
    clientData = text === null ? null : JSON.parse(text);
  } catch {
    clientData = null;
  }
  if (typeof clientData !== 'object' || clientData === null)
    return refusal('malformed', 'the passkey assertion has no valid clientDataJSON');
  const c = clientData as Record<string, unknown>;
  if (c.type !== 'webauthn.get')
    return refusal(
      'malformed',
      `the passkey assertion is not an assertion (clientDataJSON type ${JSON.stringify(c.type)})`,
    );
  if (c.challenge !== assertionChallenge(statement))
    return refusal(
      'passkey.challenge',
      `the passkey assertion was made for another ${what} (its challenge is not the digest of this ${what})`,
    );
  if (typeof c.origin !== 'string' || !credential.origins.includes(c.origin))
    return refusal(
      'passkey.origin',
      `the passkey assertion was made on origin ${JSON.stringify(c.origin)}, not one this passkey was registered for ` +
        `(${credential.origins.join(', ')})`,
    );
  if (c.crossOrigin === true)
    return refusal('passkey.origin', 'the passkey assertion was made in a cross-origin frame');
  if (authData.length < 37)
    return refusal('malformed', 'the passkey assertion is malformed (authenticator data shorter than 37 bytes)');
  if (!equalBytes(authData.subarray(0, 32), sha256(utf8(credential.rp_id))))
    return refusal(
      'passkey.rp-id',
      `the passkey assertion was made for another relying party than ${credential.rp_id}`,
    );
  const flags = authData[32] as number;
  if ((flags & FLAG_USER_PRESENT) === 0)
    return refusal('passkey.user', 'the passkey assertion does not show the user present');
  if ((flags & FLAG_USER_VERIFIED) === 0)
    return refusal(
      'passkey.user',
      'the passkey assertion does not show the user verified (a PIN, fingerprint or face)',
    );
  const signed = concat(authData, sha256(clientDataBytes));
  let ok: boolean;
  try {
    ok =
      credential.alg === 'ES256'
        ? p256.verify(signature, signed, publicKey, { format: 'der', lowS: false, prehash: true })
        : ed25519.verify(signature, signed, publicKey, { zip215: false });
  } catch {
    return refusal('malformed', 'the passkey assertion signature is malformed');
  }
  return ok
    ? null
    : refusal('bad-signature', `the passkey assertion signature does not verify against ${who}'s passkey`);
}
