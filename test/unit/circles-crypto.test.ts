import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/contracts/canonical-json';
import { signingBytes, verifyStatement } from '../../src/circles/statements';
import { signStatement } from '../../src/circles/sign';
import { fromBase64Url, toBase64Url, utf8 } from '../../src/contracts/encoding';
import { amidFromPublicKey } from '../../src/identity/verify';
import { generateIdentity, parseKeyFile } from '../../src/identity/keys';
import { BadInputError } from '../../src/contracts/errors';

describe('encodings (sandbox-safe replacements for Buffer)', () => {
  it('base64url round-trips every length and agrees with Buffer', () => {
    for (let n = 0; n < 70; n++) {
      const bytes = randomBytes(n);
      const text = toBase64Url(bytes);
      expect(text).toBe(bytes.toString('base64url'));
      expect(Buffer.from(fromBase64Url(text) as Uint8Array).equals(bytes)).toBe(true);
    }
  });

  it('refuses padding, foreign characters and non-canonical trailing bits', () => {
    expect(fromBase64Url('AAE=')).toBeNull();
    expect(fromBase64Url('AA+E')).toBeNull();
    expect(fromBase64Url('A')).toBeNull();
    expect(fromBase64Url('AB')).toBeNull(); // 'B' leaves a non-zero bit after the single byte
    expect(fromBase64Url('AA')).toEqual(new Uint8Array([0]));
  });

  it('utf8 agrees with Buffer on non-ASCII text', () => {
    const text = 'Zoë → 数据 🚀';
    expect(Buffer.from(utf8(text)).equals(Buffer.from(text, 'utf8'))).toBe(true);
  });
});

describe('identity', () => {
  it('derives a stable AMID from the public key, different per key', () => {
    const a = generateIdentity();
    const b = generateIdentity();
    expect(a.amid).toMatch(/^amid:[0-9a-f]{40}$/);
    expect(amidFromPublicKey(a.public_key)).toBe(a.amid);
    expect(a.amid).not.toBe(b.amid);
    expect(a.public_key).toHaveLength(43);
    expect(a.private_key).toHaveLength(43);
  });

  it('refuses a key file whose private key belongs to another public key', () => {
    const a = generateIdentity();
    const b = generateIdentity();
    expect(() => parseKeyFile({ ...a, private_key: b.private_key })).toThrow(
      /private_key does not belong to public_key/,
    );
    expect(() => parseKeyFile({ ...a, amid: b.amid })).toThrow(/does not match public_key/);
    expect(() => parseKeyFile({ ...a, public_key: 'not-a-key' })).toThrow(BadInputError);
    expect(parseKeyFile(a)).toEqual(a);
  });
});

describe('signed statements', () => {
  const key = generateIdentity();
  const statement = { to: 'amid:' + '1'.repeat(40), from: key.amid, time: 1_700_000_000_000, nonce: 'n'.repeat(22) };

  it('canonical JSON sorts keys at every level, so field order never changes the signed bytes', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[1,{"y":2,"z":1}]},"b":1}',
    );
    expect(signingBytes('knock', { a: 1, b: 2 })).toEqual(signingBytes('knock', { b: 2, a: 1 }));
  });

  it('verifies a node:crypto signature with the pure-JS verifier the registry uses', () => {
    const sig = signStatement('knock', statement, key.private_key);
    expect(verifyStatement('knock', statement, sig, key.public_key)).toBe(true);
    expect(verifyStatement('knock', { ...statement, to: 'amid:' + '2'.repeat(40) }, sig, key.public_key)).toBe(false);
    expect(verifyStatement('knock', statement, sig, generateIdentity().public_key)).toBe(false);
    expect(verifyStatement('knock', statement, 'x'.repeat(86), key.public_key)).toBe(false);
    expect(verifyStatement('knock', statement, sig, 'garbage')).toBe(false);
  });

  it('a signature for one kind of statement does not pass as another (domain separation)', () => {
    const sig = signStatement('knock', statement, key.private_key);
    expect(verifyStatement('bridge-request', statement, sig, key.public_key)).toBe(false);
    expect(verifyStatement('membership', statement, sig, key.public_key)).toBe(false);
  });
});

describe('public key checks', () => {
  it('refuses small-order keys, with which signatures could be forged without a private key', async () => {
    const { PublicKeySchema, decodePublicKey } = await import('../../src/contracts/identity');
    const zeroPoint = 'A'.repeat(43); // y = 0: a valid curve point of order 4
    const identity = Buffer.from([1, ...new Array<number>(31).fill(0)]).toString('base64url');
    for (const k of [zeroPoint, identity]) {
      expect(decodePublicKey(k)).toBeNull();
      expect(PublicKeySchema.safeParse(k).error?.issues[0]?.message).toBe(
        'not a valid Ed25519 public key (expected a curve point outside the small-order subgroup)',
      );
    }
    expect(decodePublicKey(generateIdentity().public_key)).not.toBeNull();
  });
});
