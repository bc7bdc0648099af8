/**
 * The inbox's two WebAuthn ceremonies. Registration (enrolment by invite) goes through `@simplewebauthn/server`: it
 * parses and checks the attestation (CBOR, authenticator data, the COSE key), which is where hand-written code goes
 * wrong. Sign-in assertions are checked by `refusePasskeyAssertion` (src/identity/passkey-verify.ts), the very
 * function the proposal workflow verifies decisions with, over a statement the server made up: one verifier, one set
 * of rules (user verified, origin, rp id) for signing in and for deciding.
 *
 * `@simplewebauthn/server` is pinned at 13.3.3, the last release line that supports Node 20 (14.x requires Node 22,
 * and this package promises Node 20.19). The pages use the browser's own `navigator.credentials`, no client library.
 */
import { randomBytes } from 'node:crypto';
import {
  generateRegistrationOptions,
  verifyRegistrationResponse,
  type PublicKeyCredentialCreationOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { cose, decodeCredentialPublicKey } from '@simplewebauthn/server/helpers';
import { WebAuthnAssertionSchema, type PasskeyCredential, type WebAuthnAssertion } from '../contracts/passkey';
import { assertionChallenge, refusePasskeyAssertion } from '../identity/passkey-verify';
import type { ApproverPasskeys } from '../contracts/passkey';
import { refusal, refused, type Checked } from '../contracts/refusal';

/** The relying party: the rp id (a host name) and the one origin pages are served from. */
export interface RelyingParty {
  rpId: string;
  origin: string;
}

/** COSE algorithm ids the inbox accepts: ES256 (-7) and EdDSA (-8), what the workflow can verify. */
const ALGORITHMS = [-7, -8];

/** Options for `navigator.credentials.create`, and the challenge to keep for the answer. */
export async function registrationOptions(
  rp: RelyingParty,
  approver: string,
  existing: readonly PasskeyCredential[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: 'agent-judge inbox',
    rpID: rp.rpId,
    userName: approver,
    userDisplayName: approver,
    attestationType: 'none',
    excludeCredentials: existing.map((c) => ({ id: c.id })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    supportedAlgorithmIDs: ALGORITHMS,
    timeout: 120_000,
  });
}

/**
 * The passkey a registration response makes, in the registry's form, or why it is refused: the challenge, origin and
 * rp id must be ours, the user verified, the key ES256 or EdDSA.
 */
export async function verifyRegistration(
  rp: RelyingParty,
  expectedChallenge: string,
  response: unknown,
  name: string | undefined,
  now = new Date(),
): Promise<Checked<PasskeyCredential>> {
  let info;
  try {
    const verified = await verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpId,
      requireUserVerification: true,
      supportedAlgorithmIDs: ALGORITHMS,
    });
    if (!verified.verified) return refused('passkey.registration', 'the passkey registration did not verify');
    info = verified.registrationInfo;
  } catch (err) {
    return refused('passkey.registration', `the passkey registration was refused: ${(err as Error).message}`);
  }
  const raw = rawPublicKey(info.credential.publicKey);
  if (!raw)
    return refused('passkey.key-type', 'the passkey uses a key type other than ES256 (P-256) or EdDSA (Ed25519)');
  return {
    ok: true,
    value: {
      id: info.credential.id,
      alg: raw.alg,
      public_key: Buffer.from(raw.key).toString('base64url'),
      rp_id: rp.rpId,
      origins: [rp.origin],
      enrolled_at: now.toISOString(),
      ...(name ? { name } : {}),
    },
  };
}

/** The raw key the registry holds, from a COSE key: 0x04 || x || y for P-256, the 32 bytes for Ed25519. */
export function rawPublicKey(coseKey: Uint8Array): { alg: 'ES256' | 'EdDSA'; key: Uint8Array } | null {
  let key: Map<number, unknown>;
  try {
    key = decodeCredentialPublicKey(new Uint8Array(coseKey)) as unknown as Map<number, unknown>;
  } catch {
    return null;
  }
  const alg = key.get(cose.COSEKEYS.alg);
  const crv = key.get(cose.COSEKEYS.crv);
  const x = key.get(cose.COSEKEYS.x);
  if (!(x instanceof Uint8Array)) return null;
  if (alg === cose.COSEALG.ES256 && crv === cose.COSECRV.P256) {
    const y = key.get(cose.COSEKEYS.y);
    if (!(y instanceof Uint8Array) || x.length !== 32 || y.length !== 32) return null;
    return { alg: 'ES256', key: Uint8Array.from([4, ...x, ...y]) };
  }
  if (alg === cose.COSEALG.EdDSA && crv === cose.COSECRV.ED25519 && x.length === 32) return { alg: 'EdDSA', key: x };
  return null;
}

/** Domain tag of a sign-in statement: never the same bytes as a decision's, so one cannot stand for the other. */
const SIGN_IN_TAG = 'agent-judge/inbox-sign-in/v1\n';

/** A fresh sign-in: the statement the server keeps, and its challenge for `navigator.credentials.get`. */
export function signInChallenge(rp: RelyingParty): { statement: string; challenge: string } {
  const statement = `${SIGN_IN_TAG}${rp.origin}\n${randomBytes(32).toString('base64url')}`;
  return { statement, challenge: assertionChallenge(new TextEncoder().encode(statement)) };
}

/**
 * The approver a sign-in assertion proves, or why not: the credential is looked up among every approver's passkeys,
 * then checked as the workflow checks a decision (challenge, origin, rp id, user present and verified, signature).
 */
export function verifySignIn(
  statement: string,
  input: unknown,
  passkeys: ApproverPasskeys,
): Checked<{ approver: string; credentialId: string }> {
  const parsed = WebAuthnAssertionSchema.safeParse(input);
  if (!parsed.success) return refused('malformed', 'the sign-in assertion is malformed');
  const assertion: WebAuthnAssertion = parsed.data;
  const owner = Object.entries(passkeys).find(([, list]) => list.some((c) => c.id === assertion.credential_id));
  if (!owner) return refused('unknown-key', 'this passkey is not registered for any approver');
  const [approver, list] = owner;
  const bad = refusePasskeyAssertion(new TextEncoder().encode(statement), assertion, list, approver);
  if (bad)
    return refused(
      bad.code === 'passkey.challenge'
        ? refusal(
            bad.code,
            'the passkey assertion was made for another sign-in (its challenge is not the one this sign-in was given)',
          )
        : bad,
    );
  return { ok: true, value: { approver, credentialId: assertion.credential_id } };
}
