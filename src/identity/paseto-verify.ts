/**
 * PASETO v4.public verification (https://github.com/paseto-standard/paseto-spec, version 4,
 * purpose `public`): Ed25519 over the pre-authentication encoding of header, message, footer and
 * implicit assertion. Pure JavaScript (`@noble/curves`), so any layer can verify, workflow code
 * included. Strict: exactly `v4.public.`, canonical unpadded base64url, a 64-byte signature, a
 * footer only when non-empty. There is no `alg` header to confuse: the version and purpose are the
 * algorithm, and this module knows one. Signing is in `paseto.ts`.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { fromBase64Url, utf8 } from '../contracts/encoding';
import { BadInputError } from '../contracts/errors';
import { PUBLIC_KEY_BYTES, SIGNATURE_BYTES } from '../contracts/identity-text';

/** The only header this module signs or accepts. */
export const V4_PUBLIC_HEADER = 'v4.public.';

/** Why a token was refused; `code` is stable for callers and tests. */
export class PasetoError extends BadInputError {
  constructor(
    readonly code: 'malformed' | 'unsupported' | 'footer' | 'signature',
    message: string,
  ) {
    super(message);
  }
}

/** Little-endian 64-bit length with the top bit cleared, as PAE requires. */
function le64(n: number): Uint8Array {
  const out = new Uint8Array(8);
  let v = n;
  for (let i = 0; i < 8; i++) {
    out[i] = v & 0xff;
    v = Math.floor(v / 256);
  }
  out[7] = (out[7] as number) & 0x7f;
  return out;
}

/**
 * Pre-authentication encoding: the count of pieces, then each piece's length and bytes. Signing
 * PAE instead of a concatenation means no piece can borrow bytes from its neighbour.
 */
export function pae(pieces: readonly Uint8Array[]): Uint8Array {
  const total = 8 + pieces.reduce((n, p) => n + 8 + p.length, 0);
  const out = new Uint8Array(total);
  out.set(le64(pieces.length), 0);
  let at = 8;
  for (const p of pieces) {
    out.set(le64(p.length), at);
    out.set(p, at + 8);
    at += 8 + p.length;
  }
  return out;
}

/** The parts of a v4.public token, before its signature is checked. */
export interface V4PublicParts {
  message: Uint8Array;
  signature: Uint8Array;
  footer: Uint8Array;
}

/** Splits a token and decodes its parts; throws {@link PasetoError} on anything but a well-formed v4.public token. */
export function parseV4Public(token: string): V4PublicParts {
  if (typeof token !== 'string' || token.length === 0) throw new PasetoError('malformed', 'the token is empty');
  const segments = token.split('.');
  if (segments.length < 3 || segments.length > 4)
    throw new PasetoError('malformed', 'a PASETO has 3 or 4 dot-separated parts');
  const [version, purpose, body, footerText] = segments as [string, string, string, string | undefined];
  if (version !== 'v4' || purpose !== 'public')
    throw new PasetoError(
      'unsupported',
      `expected a v4.public token, got ${version.slice(0, 8)}.${purpose.slice(0, 8)}`,
    );
  const raw = fromBase64Url(body);
  if (!raw) throw new PasetoError('malformed', 'the token body is not unpadded base64url');
  if (raw.length < SIGNATURE_BYTES) throw new PasetoError('malformed', 'the token body is shorter than a signature');
  let footer: Uint8Array = new Uint8Array(0);
  if (footerText !== undefined) {
    const decoded = fromBase64Url(footerText);
    // An empty footer is written without its dot: a trailing "." is not the same token.
    if (!decoded || decoded.length === 0) throw new PasetoError('malformed', 'the footer is empty or not base64url');
    footer = decoded;
  }
  return {
    message: raw.subarray(0, raw.length - SIGNATURE_BYTES),
    signature: raw.subarray(raw.length - SIGNATURE_BYTES),
    footer,
  };
}

/** The footer of a token, unauthenticated: only for choosing the key that must then verify it. */
export function unverifiedFooter(token: string): Uint8Array {
  return parseV4Public(token).footer;
}

/** Checks an Ed25519 signature over `message` with a raw 32-byte public key; false (never a throw) when it fails. */
export type Ed25519Verify = (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array) => boolean;

/** Strict RFC 8032 (no ZIP-215 leniency), as every other signature agent-judge checks; pure JavaScript. */
export const nobleEd25519Verify: Ed25519Verify = (signature, message, publicKey) => {
  try {
    return ed25519.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
};

/**
 * Verifies a v4.public token with a raw 32-byte Ed25519 public key; returns the message and footer.
 * `verify` defaults to {@link nobleEd25519Verify}, which runs anywhere, workflow code included.
 */
export function verifyV4Public(
  token: string,
  publicKey: Uint8Array,
  implicitAssertion: Uint8Array = new Uint8Array(0),
  verify: Ed25519Verify = nobleEd25519Verify,
): { message: Uint8Array; footer: Uint8Array } {
  const { message, signature, footer } = parseV4Public(token);
  if (publicKey.length !== PUBLIC_KEY_BYTES) throw new PasetoError('signature', 'the public key is not 32 bytes');
  const m2 = pae([utf8(V4_PUBLIC_HEADER), message, footer, implicitAssertion]);
  const ok = verify(signature, m2, publicKey);
  if (!ok) throw new PasetoError('signature', 'the token signature does not verify');
  return { message, footer };
}
