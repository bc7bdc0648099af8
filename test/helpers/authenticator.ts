/**
 * A software WebAuthn authenticator for tests that cannot run a browser: a P-256 (or Ed25519) key pair, and the
 * authenticator data, clientDataJSON and signature a real authenticator returns from `navigator.credentials.get`,
 * built by hand as WebAuthn Level 3 §6.1 and §5.8.1 lay them out. Tests break one part at a time.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type { PasskeyCredential, WebAuthnAssertion } from '../../src/contracts/passkey';

export interface SoftAuthenticator {
  credential: PasskeyCredential;
  /** An assertion over `challenge` (base64url), with the parts a test may change. */
  assert(
    challenge: string,
    options?: { origin?: string; rpId?: string; flags?: number; type?: string },
  ): WebAuthnAssertion;
  /**
   * What `navigator.credentials.create` returns for this credential (attestation "none"), as the JSON a page posts
   * (`RegistrationResponseJSON`), over `challenge`; `flags` defaults to user present, verified, attested data.
   */
  register(challenge: string, options?: { origin?: string; rpId?: string; flags?: number }): RegistrationJSON;
}

/** The registration response a browser page posts (SimpleWebAuthn's RegistrationResponseJSON). */
export interface RegistrationJSON {
  id: string;
  rawId: string;
  type: 'public-key';
  clientExtensionResults: Record<string, never>;
  response: { clientDataJSON: string; attestationObject: string; transports: string[] };
}

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

/** A new authenticator holding one credential for `rpId`, registered for `origin`. */
export function softAuthenticator(rpId: string, origin: string, alg: 'ES256' | 'EdDSA' = 'ES256'): SoftAuthenticator {
  const id = randomBytes(16).toString('base64url');
  let privateKey: KeyObject;
  let publicKey: Buffer;
  if (alg === 'ES256') {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = pair.publicKey.export({ format: 'jwk' });
    publicKey = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
    privateKey = pair.privateKey;
  } else {
    const pair = generateKeyPairSync('ed25519');
    publicKey = Buffer.from(pair.publicKey.export({ format: 'jwk' }).x!, 'base64url');
    privateKey = pair.privateKey;
  }
  let counter = 0;
  // The COSE key (RFC 9053): kty, alg, crv, x (and y for P-256).
  const coseKey =
    alg === 'ES256'
      ? new Map<number, number | Uint8Array>([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, publicKey.subarray(1, 33)],
          [-3, publicKey.subarray(33, 65)],
        ])
      : new Map<number, number | Uint8Array>([
          [1, 1],
          [3, -8],
          [-1, 6],
          [-2, publicKey],
        ]);
  return {
    credential: { id, alg, public_key: publicKey.toString('base64url'), rp_id: rpId, origins: [origin] },
    assert(challenge, options = {}) {
      const clientData = Buffer.from(
        JSON.stringify({
          type: options.type ?? 'webauthn.get',
          challenge,
          origin: options.origin ?? origin,
          crossOrigin: false,
        }),
      );
      const count = Buffer.alloc(4);
      count.writeUInt32BE(++counter);
      // rpIdHash (32) | flags (UP 0x01, UV 0x04) | signCount (4)
      const authData = Buffer.concat([sha256(options.rpId ?? rpId), Buffer.from([options.flags ?? 0x05]), count]);
      const signed = Buffer.concat([authData, sha256(clientData)]);
      const signature = alg === 'ES256' ? sign('sha256', signed, privateKey) : sign(null, signed, privateKey);
      return {
        credential_id: id,
        authenticator_data: authData.toString('base64url'),
        client_data_json: clientData.toString('base64url'),
        signature: signature.toString('base64url'),
      };
    },
    register(challenge, options = {}) {
      const clientData = Buffer.from(
        JSON.stringify({ type: 'webauthn.create', challenge, origin: options.origin ?? origin, crossOrigin: false }),
      );
      const rawId = Buffer.from(id, 'base64url');
      const idLength = Buffer.alloc(2);
      idLength.writeUInt16BE(rawId.length);
      // rpIdHash | flags (UP 0x01, UV 0x04, AT 0x40) | signCount 0 | aaguid (16 zero bytes) | id length | id | key
      const authData = Buffer.concat([
        sha256(options.rpId ?? rpId),
        Buffer.from([options.flags ?? 0x45]),
        Buffer.alloc(4),
        Buffer.alloc(16),
        idLength,
        rawId,
        Buffer.from(isoCBOR.encode(coseKey)),
      ]);
      const attestation = isoCBOR.encode(
        new Map<string, string | Uint8Array | Map<string, string>>([
          ['fmt', 'none'],
          ['attStmt', new Map<string, string>()],
          ['authData', new Uint8Array(authData)],
        ]),
      );
      return {
        id,
        rawId: id,
        type: 'public-key',
        clientExtensionResults: {},
        response: {
          clientDataJSON: clientData.toString('base64url'),
          attestationObject: Buffer.from(attestation).toString('base64url'),
          transports: ['internal'],
        },
      };
    },
  };
}
