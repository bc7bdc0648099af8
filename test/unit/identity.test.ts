/**
 * The one identity module: one verifier, one freshness window, one byte layout, and public keys
 * that are real curve points wherever they enter (here: the policy's approver and bot keys).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { operatorSigningBytes } from '../../src/circles/operator';
import { signingBytes } from '../../src/circles/statements';
import { PolicyError } from '../../src/contracts/errors';
import { decisionSigningBytes, signingKeyFor } from '../../src/identity/decision';
import { generateIdentity, signBytes } from '../../src/identity/keys';
import { checkSignature, SIGNATURE_WINDOW_MS, staleness, statementBytes } from '../../src/identity/verify';
import { DEFAULT_POLICY_PATH, loadPolicy } from '../../src/policy/load';
import { testPolicy } from '../helpers/system';

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

describe('signed bytes stay byte-for-byte what signers have always signed', () => {
  it('circle statements, operator actions and human decisions (v2): domain tag, newline, canonical JSON', () => {
    expect(text(signingBytes('knock', { to: 'b', from: 'a' }))).toBe(
      'agent-judge/circles/v1/knock\n{"from":"a","to":"b"}',
    );
    expect(text(operatorSigningBytes('allow-pair', { b: 'y', a: 'x', operator: { dropped: true } }, 5, 'n'))).toBe(
      'agent-judge/circles-operator/v1\n{"action":"allow-pair","input":{"a":"x","b":"y"},"nonce":"n","signed_at":5}',
    );
    expect(
      text(
        decisionSigningBytes(
          { workflowId: 'wf-1', runId: 'run-1', contentSha256: 'ab'.repeat(32) },
          { decision: 'approve', approver: 'scott', via: 'cli' },
          '2026-01-01T00:00:00.000Z',
          'n',
        ),
      ),
    ).toBe(
      'agent-judge/human-decision/v2\n{"approver":"scott","content_sha256":"' +
        'ab'.repeat(32) +
        '","decision":"approve","nonce":"n","reason":null,' +
        '"run_id":"run-1","signed_at":"2026-01-01T00:00:00.000Z","workflow_id":"wf-1"}',
    );
  });
});

describe('one verifier', () => {
  const key = generateIdentity();
  const bytes = statementBytes('agent-judge/test/v1', { a: 1 });
  const sig = signBytes(bytes, key.private_key);

  it('tells a good signature from a mismatch and from values that cannot be signatures or keys', () => {
    expect(checkSignature(bytes, sig, key.public_key)).toBe('ok');
    expect(checkSignature(statementBytes('agent-judge/test/v1', { a: 2 }), sig, key.public_key)).toBe(
      'does-not-verify',
    );
    expect(checkSignature(bytes, sig, generateIdentity().public_key)).toBe('does-not-verify');
    expect(checkSignature(bytes, 'x'.repeat(10), key.public_key)).toBe('malformed');
    expect(checkSignature(bytes, sig, 'not a key')).toBe('malformed');
  });
});

describe('one freshness window', () => {
  const now = Date.parse('2026-06-01T12:00:00Z');
  it('accepts signing times within the window either way and says how far off the others are', () => {
    expect(SIGNATURE_WINDOW_MS).toBe(5 * 60_000);
    expect(staleness(now - SIGNATURE_WINDOW_MS, now)).toBeNull();
    expect(staleness(now + SIGNATURE_WINDOW_MS, now)).toBeNull();
    expect(staleness(now - 400_000, now)).toBe(
      'signed at 2026-06-01T11:53:20.000Z is 400s old; the freshness window is 300s',
    );
    expect(staleness(now + 31_000, now, 30_000)).toMatch(/is 31s in the future; the freshness window is 30s$/);
    expect(staleness(Number.NaN, now)).toBe('has no valid signing time');
    // A time no Date can hold is still described, not thrown on (workflow code must not throw here).
    expect(staleness(9e15, now)).toMatch(/^signed at 9000000000000000 is/);
  });
});

describe('keys in the policy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-judge-identity-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function loadWithEscalation(escalation: Record<string, unknown>): Promise<unknown> {
    const raw = parseYaml(readFileSync(DEFAULT_POLICY_PATH, 'utf8')) as { spec: { escalation?: object } };
    raw.spec.escalation = { ...raw.spec.escalation, ...escalation };
    const file = join(dir, `policy-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, toYaml(raw));
    return loadPolicy({ path: file, baseDir: dir, env: {} }).then(
      (p) => p,
      (e: unknown) => e,
    );
  }

  // 43 base64url characters, so the old shape check passed it; y = 0 is a point of order 4.
  const smallOrder = 'A'.repeat(43);
  // 43 characters whose bytes are not the encoding of any curve point.
  const notAPoint = '_'.repeat(42) + 'w';

  it('refuses an approver key or bot key that is not a usable Ed25519 key, naming the field', async () => {
    for (const bad of [smallOrder, notAPoint]) {
      const err = await loadWithEscalation({ approvers: ['scott'], approverKeys: { scott: bad } });
      expect(err).toBeInstanceOf(PolicyError);
      expect((err as PolicyError).message).toMatch(/spec\.escalation\.approverKeys\.scott/);
      expect((err as PolicyError).message).toMatch(/not a valid Ed25519 public key/);
      const botErr = await loadWithEscalation({ discordBotKey: bad });
      expect(botErr).toBeInstanceOf(PolicyError);
      expect((botErr as PolicyError).message).toMatch(/spec\.escalation\.discordBotKey/);
    }
  });

  it('accepts real keys', async () => {
    const scott = generateIdentity();
    const policy = await loadWithEscalation({ approvers: ['scott'], approverKeys: { scott: scott.public_key } });
    expect(policy).not.toBeInstanceOf(Error);
  });

  it('an approver id that names an Object property finds no key', () => {
    const policy = testPolicy('/tmp', { escalation: { approvers: ['constructor', 'toString'] } });
    expect(signingKeyFor(policy, 'constructor')).toBeNull();
    expect(signingKeyFor(policy, 'toString')).toBeNull();
  });
});
