/** `agent-judge circles ...` as a user scripts it: exact JSON on stdout and exit codes. */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { parseSince } from '../../src/cli/shared';
import { runCircles } from '../helpers/circles-cli';
import { startCirclesEnv, type CirclesEnv } from '../helpers/circles-env';

let env: CirclesEnv;
const dir = mkdtempSync(join(tmpdir(), 'circles-cli-'));
let registryArgs: string[];
const cli = (...args: string[]) =>
  runCircles(['circles', ...registryArgs, ...args], { address: env.address, namespace: env.namespace });

beforeAll(async () => {
  env = await startCirclesEnv(inject('temporalAddress'), inject('temporalNamespace'), 'cli');
  registryArgs = ['--registry-id', `circle-registry-cli-${randomUUID().slice(0, 8)}`, '--task-queue', env.taskQueue];
});
afterAll(async () => env?.stop());

async function keygen(name: string): Promise<{ file: string; amid: string; public_key: string }> {
  const r = await cli('keygen');
  expect(r.code).toBe(0);
  const key = r.json<{ amid: string; public_key: string }>();
  expect(Object.keys(key)).toEqual(['amid', 'public_key', 'private_key']);
  const file = join(dir, `${name}.key`);
  writeFileSync(file, r.stdout, { mode: 0o600 });
  return { file, amid: key.amid, public_key: key.public_key };
}

describe('agent-judge circles', () => {
  let A: Awaited<ReturnType<typeof keygen>>;
  let B: Awaited<ReturnType<typeof keygen>>;
  let a1: Awaited<ReturnType<typeof keygen>>;
  let b1: Awaited<ReturnType<typeof keygen>>;
  let circleA: string;

  it('keygen, register and spawn print exactly the documented fields', async () => {
    A = await keygen('A');
    B = await keygen('B');
    a1 = await keygen('a1');
    b1 = await keygen('b1');
    const ra = await cli('register', '--public-key', A.public_key);
    expect(ra.code).toBe(0);
    circleA = ra.json<{ circle_id: string }>().circle_id;
    expect(circleA).toMatch(/^[0-9a-f-]{36}$/);
    expect(ra.json()).toEqual({ amid: A.amid, circle_id: circleA, role: 'top-level' });
    expect((await cli('register', '--public-key', B.public_key)).code).toBe(0);
    const sa = await cli('spawn', '--parent-key', A.file, '--public-key', a1.public_key);
    expect(sa.code).toBe(0);
    expect(sa.json()).toEqual({ amid: a1.amid, circle_id: circleA, parent_amid: A.amid, role: 'sub-agent' });
    expect(Object.keys(sa.json<object>())).toEqual(['amid', 'circle_id', 'parent_amid', 'role']);
    expect((await cli('spawn', '--parent-key', B.file, '--public-key', b1.public_key)).code).toBe(0);
  });

  it('knock prints {allowed, reason}; exit 0 when allowed, 3 when denied', async () => {
    const ok = await cli('knock', '--key', a1.file, '--to', A.amid);
    expect(ok.code).toBe(0);
    expect(ok.json()).toEqual({ allowed: true, reason: `${A.amid} is the caller's parent` });
    const no = await cli('knock', '--key', a1.file, '--to', b1.amid);
    expect(no.code).toBe(3);
    const denied = no.json<{ allowed: boolean; reason: string }>();
    expect(Object.keys(denied)).toEqual(['allowed', 'reason']);
    expect(denied.allowed).toBe(false);
    expect(denied.reason).toContain('may knock only its parent and its own circle');
    expect((await cli('knock', '--key', A.file, '--to', B.amid)).code).toBe(0);
  });

  it('discover, tree and prompt', async () => {
    const d = await cli('discover', '--key', a1.file);
    expect(d.code).toBe(0);
    expect(d.json()).toEqual({ agents: [{ amid: A.amid, role: 'top-level', circle_id: circleA, parent_amid: null }] });
    const t = await cli('tree', '--circle', circleA);
    expect(t.json<{ circles: unknown }>().circles).toEqual([
      {
        circle_id: circleA,
        org: 'default',
        root: {
          amid: A.amid,
          role: 'top-level',
          status: 'active',
          children: [{ amid: a1.amid, role: 'sub-agent', status: 'active', children: [] }],
        },
      },
    ]);
    expect(t.json<{ agents: unknown }>().agents).toEqual({ total: 4, active: 4, retired: 0 });
    const p = await cli('prompt', '--key', a1.file);
    expect(p.code).toBe(0);
    expect(p.json<{ prompt: string }>().prompt).toContain(`Your parent is ${A.amid}.`);
    expect((await cli('prompt', '--key', A.file)).code).toBe(2);
  });

  it('allow-pair and revoke-pair', async () => {
    const X = await keygen('X');
    expect((await cli('register', '--public-key', X.public_key, '--org', 'partner')).code).toBe(0);
    expect((await cli('knock', '--key', A.file, '--to', X.amid)).code).toBe(3);
    const allow = await cli('allow-pair', A.amid, X.amid);
    expect(allow.json()).toEqual({ pair: [A.amid, X.amid], allowed: true });
    expect((await cli('knock', '--key', A.file, '--to', X.amid)).code).toBe(0);
    const revoke = await cli('revoke-pair', A.amid, X.amid);
    expect(revoke.json()).toEqual({ pair: [A.amid, X.amid], allowed: false });
    expect((await cli('knock', '--key', A.file, '--to', X.amid)).code).toBe(3);
    const bad = await cli('allow-pair', A.amid, a1.amid);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('the allowlist joins top-level agents only');
  });

  it('events lists the denials with exact totals; --since filters', async () => {
    const e = await cli('events', '--since', '24h');
    expect(e.code).toBe(0);
    const view = e.json<{ total: number; events: Array<{ code: string }> }>();
    expect(view.total).toBe(3);
    expect(view.events.map((x) => x.code)).toEqual(['cross-circle', 'not-allowlisted', 'not-allowlisted']);
    expect(view.events[0]).toMatchObject({ kind: 'knock-denied', from: a1.amid, to: b1.amid });
    const future = await cli('events', '--since', new Date(Date.now() + 3_600_000).toISOString());
    expect(future.json()).toMatchObject({ events: [], total: 3 });
  });

  it('bridge request, decide and list', async () => {
    const r = await cli('bridge', 'request', '--key', a1.file, '--to', b1.amid, '--message', 'hello B');
    expect(r.code).toBe(0);
    const id = r.json<{ request_id: string }>().request_id;
    const decide = async (key: string, decision: string) =>
      (await cli('bridge', 'decide', '--key', key, '--request', id, '--decision', decision)).json<{ status: string }>();
    expect((await decide(A.file, 'forward')).status).toBe('awaiting-target-parent');
    expect((await decide(B.file, 'deliver')).status).toBe('delivered');
    expect((await cli('bridge', 'list', '--key', b1.file)).json()).toMatchObject({
      requests: [{ request_id: id, message: 'hello B' }],
    });
  });

  it('retire prints the retired sub-tree; the retired agent is then denied', async () => {
    const r = await cli('retire', '--amid', A.amid);
    expect(r.json()).toEqual({ retired: [A.amid, a1.amid] });
    const k = await cli('knock', '--key', a1.file, '--to', A.amid);
    expect(k.code).toBe(3);
    expect(k.json()).toEqual({ allowed: false, reason: `caller ${a1.amid} is retired` });
  });

  it('bad input exits 2 with a readable message and starts nothing', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['knock', '--key', a1.file, '--to', 'nobody'], /--to: expected an AMID/],
      [['knock', '--key', join(dir, 'missing.key'), '--to', A.amid], /cannot read/],
      [['register', '--public-key', 'short'], /public_key: expected an Ed25519 public key/],
      [['events', '--since', 'yesterday'], /--since: expected a duration/],
      [['discover'], /give --key <file> or --amid <amid>/],
      [['knock', '--key', a1.file], /.*/], // missing --to: a usage error
    ];
    const broken = join(dir, 'broken.key');
    writeFileSync(broken, JSON.stringify({ amid: a1.amid, public_key: a1.public_key, private_key: 'A'.repeat(43) }));
    cases.push([['knock', '--key', broken, '--to', A.amid], /private_key does not belong to public_key/]);
    for (const [args, message] of cases) {
      const r = await cli(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(message);
    }
  });
});

describe('parseSince', () => {
  it('reads durations and ISO times', () => {
    expect(parseSince('24h', 100_000_000)).toBe(100_000_000 - 86_400_000);
    expect(parseSince('30m', 10_000_000)).toBe(10_000_000 - 1_800_000);
    expect(parseSince('2026-01-01T00:00:00Z')).toBe(Date.parse('2026-01-01T00:00:00Z'));
    expect(() => parseSince('1y')).toThrow(/expected a duration/);
  });
});
