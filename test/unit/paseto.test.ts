/**
 * PASETO v4.public and capability tokens without a server: the official test vectors, a known-answer
 * capability token, interoperation both ways with an independent implementation (the `paseto`
 * package on Web Crypto), and every refusal a verifier owes.
 */
import { PublicProtocol } from 'paseto';
import { ImportPublicKeyFactory, ImportSecretKeyFactory, SignFactory, VerifyFactory } from 'paseto/v4/public';
import { describe, expect, it } from 'vitest';
import { actionDigest, mcpToolCallDigest, type CapabilityClaims } from '../../src/contracts/capability';
import { canonicalJson } from '../../src/contracts/canonical-json';
import { nodeEd25519Verify, verifyCapability } from '../../src/identity/capability';
import {
  generateCapabilityKey,
  loadCapabilityKey,
  refuseIssuerKey,
  signCapability,
  withCapabilityIssuer,
} from '../../src/identity/capability-key';
import { parseV4Public, PasetoError, signV4Public, verifyV4Public } from '../../src/identity/paseto';
import { defaultPolicyWith } from '../../src/policy/load';
import { describeIssues } from '../../src/contracts/zod-error';
import { CompliancePolicySchema } from '../../src/contracts/policy';

const hex = (h: string) => Uint8Array.from(Buffer.from(h, 'hex'));
const text = (s: string) => new TextEncoder().encode(s);
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64url');

// paseto-standard/test-vectors v4.json, 4-S-1 and 4-S-2.
const SECRET = hex(
  'b4cbfb43df4ce210727d953e4a713307fa19bb7d9f85041438d9e11b942a3774' +
    '1eb9dbbbbc047c03fd70604e0071f0987e16b28b757225c11f00415d0e20b1a2',
);
const PUBLIC = hex('1eb9dbbbbc047c03fd70604e0071f0987e16b28b757225c11f00415d0e20b1a2');
const VECTOR_MESSAGE = '{"data":"this is a signed message","exp":"2022-01-01T00:00:00+00:00"}';
const VECTOR_FOOTER = '{"kid":"zVhMiPBP9fRf2snEcT7gFTioeA9COcNy9DfgL1W60haN"}';
const VECTOR_4S1 =
  'v4.public.eyJkYXRhIjoidGhpcyBpcyBhIHNpZ25lZCBtZXNzYWdlIiwiZXhwIjoiMjAyMi0wMS0wMVQwMDowMDowMCswMDowMCJ9bg_XBBzds8' +
  'lTZShVlwwKSgeKpLT3yukTw6JUz3W4h_ExsQV-P0V54zemZDcAxFaSeef1QlXEFtkqxT1ciiQEDA';
const VECTOR_4S2 =
  'v4.public.eyJkYXRhIjoidGhpcyBpcyBhIHNpZ25lZCBtZXNzYWdlIiwiZXhwIjoiMjAyMi0wMS0wMVQwMDowMDowMCswMDowMCJ9v3Jt8mx_Td' +
  'M2ceTGoqwrh4yDFn0XsHvvV_D0DtwQxVrJEBMl0F2caAdgnpKlt4p7xBnx1HcO-SPo8FPp214HDw.eyJraWQiOiJ6VmhNaVBCUDlmUmYyc25FY1Q3' +
  'Z0ZUaW9lQTlDT2NOeTlEZmdMMVc2MGhhTiJ9';

const KID = 'test-2026';
const keyOf = () => loadCapabilityKey(`${KID}:${b64(SECRET.subarray(0, 32))}`);
const ISSUERS = { [KID]: b64(PUBLIC) };
const CLAIMS: CapabilityClaims = {
  sub: '@engineering',
  aud: 'executor:exec',
  jti: '0b6f1f7e-6a39-4c1e-9a53-3b1e8f6d2c10',
  iat: '2026-12-01T03:00:00.000Z',
  exp: '2026-12-01T03:10:00.000Z',
  wid: 'proposal-0123456789abcdef0123456789abcdef',
  policy_sha256: 'a'.repeat(64),
  action_sha256: 'b'.repeat(64),
};
// Our token for CLAIMS with the vector key: canonical JSON payload, footer {"kid":"test-2026"}.
const CAPABILITY_KAT =
  'v4.public.eyJhY3Rpb25fc2hhMjU2IjoiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYm' +
  'JiYmJiYiIsImF1ZCI6ImV4ZWN1dG9yOmV4ZWMiLCJleHAiOiIyMDI2LTEyLTAxVDAzOjEwOjAwLjAwMFoiLCJpYXQiOiIyMDI2LTEyLTAxVDAzOj' +
  'AwOjAwLjAwMFoiLCJqdGkiOiIwYjZmMWY3ZS02YTM5LTRjMWUtOWE1My0zYjFlOGY2ZDJjMTAiLCJwb2xpY3lfc2hhMjU2IjoiYWFhYWFhYWFhYW' +
  'FhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYSIsInN1YiI6IkBlbmdpbmVlcmluZyIsIndpZCI6In' +
  'Byb3Bvc2FsLTAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVmIn2FtSQ2ciESO0dnA40rWJYsPQ1WVVKhsfH92dlvPfb38CblV1RFTpNmt6' +
  'CwEbCM7VBlFGbZPTFYcTP1HmLoxUwA.eyJraWQiOiJ0ZXN0LTIwMjYifQ';
const BEFORE_EXPIRY = Date.parse('2026-12-01T03:05:00Z');

const v4 = new PublicProtocol(SignFactory, VerifyFactory, ImportSecretKeyFactory, ImportPublicKeyFactory);
const theirSecret = () => v4.ImportSecretKey(`k4.secret.${b64(SECRET)}`);
const theirPublic = () => v4.ImportPublicKey(`k4.public.${b64(PUBLIC)}`);

/** Replaces one character of a base64url segment with another valid one. */
function flip(segment: string, at: number): string {
  const c = segment[at] === 'A' ? 'B' : 'A';
  return segment.slice(0, at) + c + segment.slice(at + 1);
}

describe('PASETO v4.public', () => {
  it('signs the official vectors 4-S-1 and 4-S-2 to the exact tokens, and verifies them', () => {
    expect(signV4Public(text(VECTOR_MESSAGE), SECRET.subarray(0, 32))).toBe(VECTOR_4S1);
    expect(signV4Public(text(VECTOR_MESSAGE), SECRET.subarray(0, 32), text(VECTOR_FOOTER))).toBe(VECTOR_4S2);
    expect(new TextDecoder().decode(verifyV4Public(VECTOR_4S2, PUBLIC).footer)).toBe(VECTOR_FOOTER);
  });

  it('signs a capability token to a known answer', async () => {
    expect(signCapability(CLAIMS, await keyOf())).toBe(CAPABILITY_KAT);
    const check = verifyCapability(CAPABILITY_KAT, { issuers: ISSUERS, nowMs: BEFORE_EXPIRY });
    expect(check).toEqual({ ok: true, value: { claims: CLAIMS, kid: KID } });
  });

  it('interoperates with the paseto package both ways', async () => {
    // Theirs verifies ours, claims and footer intact.
    const theirs = await v4.Verify(await theirPublic(), CAPABILITY_KAT, {
      now: new Date(BEFORE_EXPIRY),
      audience: 'executor:exec',
      footer: text(`{"kid":"${KID}"}`),
    });
    expect(theirs.claims).toEqual(CLAIMS);
    // Ours verifies theirs; deterministic Ed25519 over the same bytes gives the very same token.
    const signed = await v4.Sign(await theirSecret(), JSON.parse(canonicalJson(CLAIMS)) as Record<string, string>, {
      footer: text(canonicalJson({ kid: KID })),
      addIssuedAt: false,
    });
    expect(signed).toBe(CAPABILITY_KAT);
    const fresh = await v4.Sign(
      await theirSecret(),
      { ...CLAIMS, jti: 'from-the-paseto-package' },
      { footer: text(`{"kid":"${KID}"}`), addIssuedAt: false },
    );
    const check = verifyCapability(fresh, { issuers: ISSUERS, nowMs: BEFORE_EXPIRY, audience: 'executor:exec' });
    expect(check.ok && check.value.claims.jti).toBe('from-the-paseto-package');
  });
});

describe('the node:crypto verifier capability checks use agrees with the pure-JavaScript one', () => {
  const L = (1n << 252n) + 27742317777372353535851937790883648493n;
  /** The same signature with S + L in place of S: the same point equation, a non-canonical encoding. */
  function nonCanonical(token: string): string {
    const { message, signature, footer } = parseV4Public(token);
    let sValue = 0n;
    for (let i = 63; i >= 32; i--) sValue = (sValue << 8n) | BigInt(signature[i]!);
    sValue += L;
    const out = Uint8Array.from(signature);
    for (let i = 32; i < 64; i++) {
      out[i] = Number(sValue & 0xffn);
      sValue >>= 8n;
    }
    const body = b64(Uint8Array.from([...message, ...out]));
    return `v4.public.${body}${footer.length ? `.${b64(footer)}` : ''}`;
  }
  const [h1, h2, body, footer] = VECTOR_4S2.split('.') as [string, string, string, string];
  const cases: Array<[string, string, Uint8Array, boolean]> = [
    ['4-S-1', VECTOR_4S1, PUBLIC, true],
    ['4-S-2', VECTOR_4S2, PUBLIC, true],
    ['a tampered payload', `${h1}.${h2}.${flip(body, 20)}.${footer}`, PUBLIC, false],
    ['a tampered signature', `${h1}.${h2}.${flip(body, body.length - 10)}.${footer}`, PUBLIC, false],
    ['another key', VECTOR_4S2, hex('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a'), false],
    ['S + L (malleated)', nonCanonical(VECTOR_4S2), PUBLIC, false],
  ];
  it.each(cases)('%s', (_what, token, key, valid) => {
    const withNode = () => verifyV4Public(token, key, undefined, nodeEd25519Verify);
    const withNoble = () => verifyV4Public(token, key);
    if (valid) {
      expect(withNode().message).toEqual(withNoble().message);
    } else {
      expect(withNode).toThrow(PasetoError);
      expect(withNoble).toThrow(PasetoError);
    }
  });
});

describe('capability token refusals', () => {
  const expect_ = { issuers: ISSUERS, nowMs: BEFORE_EXPIRY };
  const [h1, h2, body, footer] = CAPABILITY_KAT.split('.') as [string, string, string, string];

  it('refuses a tampered payload, signature or footer', () => {
    const payload = verifyCapability(`${h1}.${h2}.${flip(body, 20)}.${footer}`, expect_);
    expect(payload).toMatchObject({ ok: false, refusal: { code: 'signature' } });
    const signature = verifyCapability(`${h1}.${h2}.${flip(body, body.length - 10)}.${footer}`, expect_);
    expect(signature).toMatchObject({ ok: false, refusal: { code: 'signature' } });
    // Same key id, one more byte in the footer: the footer is authenticated.
    const otherFooter = b64(text(`{"kid":"${KID}" }`));
    expect(verifyCapability(`${h1}.${h2}.${body}.${otherFooter}`, expect_)).toMatchObject({
      ok: false,
      refusal: { code: 'signature' },
    });
    // No footer at all: no key id, nothing to verify with.
    expect(verifyCapability(`${h1}.${h2}.${body}`, expect_)).toMatchObject({
      ok: false,
      refusal: { code: 'malformed' },
    });
  });

  it('refuses an expired token, a wrong audience, workflow or action', () => {
    expect(verifyCapability(CAPABILITY_KAT, { ...expect_, nowMs: Date.parse(CLAIMS.exp) })).toMatchObject({
      ok: false,
      refusal: { code: 'expired', reason: `the token expired at ${CLAIMS.exp}` },
    });
    expect(verifyCapability(CAPABILITY_KAT, { ...expect_, audience: 'mcp:filesystem' })).toMatchObject({
      ok: false,
      refusal: { code: 'audience', reason: 'the token is for executor:exec, not mcp:filesystem' },
    });
    expect(verifyCapability(CAPABILITY_KAT, { ...expect_, workflowId: 'proposal-other' })).toMatchObject({
      ok: false,
      refusal: { code: 'workflow' },
    });
    expect(verifyCapability(CAPABILITY_KAT, { ...expect_, actionSha256: 'c'.repeat(64) })).toMatchObject({
      ok: false,
      refusal: { code: 'action' },
    });
  });

  it('refuses an unknown key id and a token signed by another key under a listed id', () => {
    expect(verifyCapability(CAPABILITY_KAT, { ...expect_, issuers: { other: ISSUERS[KID] } })).toMatchObject({
      ok: false,
      refusal: { code: 'unknown-key' },
    });
    // An own-property lookup: a key id such as `constructor` finds nothing.
    const other = generateCapabilityKey(KID);
    expect(verifyCapability(CAPABILITY_KAT, { ...expect_, issuers: { [KID]: other.public_key } })).toMatchObject({
      ok: false,
      refusal: { code: 'signature' },
    });
  });

  it('refuses other versions and purposes, and non-canonical encodings', () => {
    for (const header of ['v2.public', 'v3.public', 'v4.local', 'v1.public', 'V4.public']) {
      const check = verifyCapability(`${header}.${body}.${footer}`, expect_);
      expect(check, header).toMatchObject({ ok: false, refusal: { code: 'unsupported' } });
    }
    expect(() => parseV4Public(`v4.public.${body}.`)).toThrow(PasetoError);
    expect(() => parseV4Public(`v4.public.${body}=`)).toThrow(/base64url/);
    expect(() => parseV4Public('v4.public.AAAA')).toThrow(/shorter than a signature/);
    expect(verifyCapability('', expect_)).toMatchObject({ ok: false, refusal: { code: 'malformed' } });
  });
});

describe('capability keys and digests', () => {
  it('binds the action type, target and parameters, and nothing else', () => {
    const a = { action_type: 'exec', target: { host: 'local' }, parameters: { command: ['echo', 'hi'] } };
    expect(actionDigest(a)).toBe(actionDigest({ ...a, justification: 'other words' } as typeof a));
    expect(actionDigest(a)).not.toBe(actionDigest({ ...a, parameters: { command: ['echo', 'ho'] } }));
    const call = { tool: 'write_file', tool_definition_hash: 'd'.repeat(64), arguments: { path: 'a.txt' } };
    expect(mcpToolCallDigest({ ...call, arguments: { ...call.arguments, _agent_judge: { justification: 'x' } } })).toBe(
      mcpToolCallDigest(call),
    );
  });

  it('refuses a worker key the policy does not list, or lists with another public key', async () => {
    const key = await keyOf();
    const policy = defaultPolicyWith();
    expect(refuseIssuerKey(policy, key)?.reason).toMatch(/not listed in the policy's spec.capabilities.issuers/);
    expect(refuseIssuerKey(withCapabilityIssuer(policy, key), key)).toBeNull();
    const other = generateCapabilityKey(KID);
    const wrong = defaultPolicyWith({ capabilities: { issuers: { [KID]: other.public_key } } });
    expect(refuseIssuerKey(wrong, key)?.reason).toMatch(/lists another public key/);
  });

  it('validates spec.capabilities with the field named', () => {
    const raw = (capabilities: unknown) => {
      const p = JSON.parse(JSON.stringify(defaultPolicyWith())) as { spec: Record<string, unknown> };
      p.spec.capabilities = capabilities;
      const r = CompliancePolicySchema.safeParse(p);
      return r.success ? 'ok' : describeIssues('policy', r.error.issues);
    };
    expect(raw({ issuers: { k1: 'not-a-key' } })).toMatch(/spec\.capabilities\.issuers\.k1/);
    expect(raw({ issuers: { 'bad kid!': ISSUERS[KID] } })).toMatch(/spec\.capabilities\.issuers/);
    expect(raw({ ttl: '1s' })).toMatch(/spec\.capabilities\.ttl.*between 10s and 24h/);
    expect(raw({ ttl: '10m', extra: 1 })).toMatch(/spec\.capabilities/);
    expect(raw(undefined)).toBe('ok');
    expect(defaultPolicyWith().spec.capabilities).toEqual({ issuers: {}, ttl: '10m' });
  });

  it('loads a key file or an inline key, with one-line errors', async () => {
    await expect(loadCapabilityKey('k1:short')).rejects.toThrow(/cannot read k1:short/);
    await expect(loadCapabilityKey('/nonexistent/key.json')).rejects.toThrow(/AGENT_JUDGE_CAPABILITY_KEY/);
    const key = await keyOf();
    expect(key.publicKey).toBe(ISSUERS[KID]);
  });
});
