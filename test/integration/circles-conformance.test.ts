/**
 * Seed 003 against a real Temporal server: the conformance test, the full communication matrix
 * cell by cell, the analyst -> viz -> writer pipeline, discovery, the prompt, and the bridge.
 */
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { generateIdentity } from '../../src/identity/keys';
import { trustCirclePrompt } from '../../src/circles/prompt';
import type { KeyFile } from '../../src/contracts/identity';
import type { CircleRegistryClient } from '../../src/client/circles';
import { startCirclesEnv, type CirclesEnv } from '../helpers/circles-env';

let env: CirclesEnv;
beforeAll(async () => {
  env = await startCirclesEnv(inject('temporalAddress'), inject('temporalNamespace'), 'conformance');
});
afterAll(async () => env?.stop());

async function topLevel(reg: CircleRegistryClient, org?: string): Promise<KeyFile & { circle: string }> {
  const key = generateIdentity();
  const r = await reg.registerTopLevel({ public_key: key.public_key, ...(org ? { org } : {}) });
  // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- vitest types matchers as any
  expect(r).toEqual({ amid: key.amid, circle_id: expect.any(String), role: 'top-level' });
  return { ...key, circle: r.circle_id };
}

async function subAgent(
  reg: CircleRegistryClient,
  parent: KeyFile & { circle: string },
): Promise<KeyFile & { circle: string }> {
  const key = generateIdentity();
  const r = await reg.spawnSubAgent({ parentKey: parent, childPublicKey: key.public_key });
  expect(r).toEqual({ amid: key.amid, circle_id: parent.circle, parent_amid: parent.amid, role: 'sub-agent' });
  return { ...key, circle: r.circle_id };
}

describe('seed conformance: two parents, one sub each', () => {
  it('the subs cannot knock each other; the parents can; each sub can knock its parent', async () => {
    const reg = env.registry();
    const A = await topLevel(reg);
    const B = await topLevel(reg);
    const a1 = await subAgent(reg, A);
    const b1 = await subAgent(reg, B);

    const subToSub = await reg.knock({ key: a1, to: b1.amid });
    expect(subToSub.allowed).toBe(false);
    expect(subToSub.reason).toContain(`may knock only its parent and its own circle ${A.circle}`);
    expect((await reg.knock({ key: b1, to: a1.amid })).allowed).toBe(false);

    expect(await reg.knock({ key: A, to: B.amid })).toMatchObject({ allowed: true, code: 'top-level-peer' });
    expect(await reg.knock({ key: B, to: A.amid })).toMatchObject({ allowed: true, code: 'top-level-peer' });
    expect(await reg.knock({ key: a1, to: A.amid })).toMatchObject({ allowed: true, code: 'parent' });
    expect(await reg.knock({ key: b1, to: B.amid })).toMatchObject({ allowed: true, code: 'parent' });

    // Both denials are governance events, with the reason the caller saw.
    const events = await reg.events();
    expect(events.total).toBe(2);
    expect(events.events.map((e) => [e.kind, e.code, e.from, e.to])).toEqual([
      ['knock-denied', 'cross-circle', a1.amid, b1.amid],
      ['knock-denied', 'cross-circle', b1.amid, a1.amid],
    ]);
    expect(events.events[0]?.reason).toBe(subToSub.reason);
  });
});

describe('the communication matrix of seed 003, cell by cell', () => {
  // Parent A with sub-tree a1 -> a11 and a2; Parent B with b1 -> b11;
  // External: a top-level agent of another organisation.
  type Cast = Record<'A' | 'a1' | 'a11' | 'a2' | 'B' | 'b1' | 'b11' | 'X', KeyFile & { circle: string }>;
  let reg: CircleRegistryClient;
  let cast: Cast;
  beforeAll(async () => {
    reg = env.registry();
    const A = await topLevel(reg);
    const B = await topLevel(reg);
    const X = await topLevel(reg, 'partner');
    const a1 = await subAgent(reg, A);
    const a11 = await subAgent(reg, a1);
    const a2 = await subAgent(reg, A);
    const b1 = await subAgent(reg, B);
    const b11 = await subAgent(reg, b1);
    cast = { A, a1, a11, a2, B, b1, b11, X };
  });

  // [row (caller), column (target), allowed]; SubA* and SubB* cells are checked for direct and deeper sub-agents.
  const cells: Array<[keyof Cast, keyof Cast, boolean]> = [
    // Parent A row: ✅ SubA*, ✅ Parent B, ❌ SubB*, External per policy (no allowlist entry: ❌)
    ['A', 'a1', true],
    ['A', 'a11', true],
    ['A', 'B', true],
    ['A', 'b1', false],
    ['A', 'b11', false],
    ['A', 'X', false],
    // SubA* row: ✅ Parent A, ✅ SubA*, ❌ Parent B, ❌ SubB*, ❌ External
    ['a1', 'A', true],
    ['a11', 'A', true],
    ['a1', 'a11', true],
    ['a11', 'a1', true],
    ['a1', 'a2', true],
    ['a11', 'a2', true],
    ['a1', 'B', false],
    ['a11', 'B', false],
    ['a1', 'b1', false],
    ['a11', 'b11', false],
    ['a1', 'X', false],
    // Parent B row: ✅ Parent A, ❌ SubA*, ✅ SubB*, External per policy
    ['B', 'A', true],
    ['B', 'a1', false],
    ['B', 'a11', false],
    ['B', 'b1', true],
    ['B', 'b11', true],
    ['B', 'X', false],
    // SubB* row: ❌ Parent A, ❌ SubA*, ✅ Parent B, ✅ SubB*, ❌ External
    ['b1', 'A', false],
    ['b11', 'A', false],
    ['b1', 'a1', false],
    ['b11', 'a2', false],
    ['b1', 'B', true],
    ['b11', 'B', true],
    ['b1', 'b11', true],
    ['b11', 'b1', true],
    ['b1', 'X', false],
    // External (another organisation) is reached by no one without the allowlist
    ['X', 'A', false],
    ['X', 'a1', false],
    ['X', 'b1', false],
  ];

  it.each(cells)('%s knocks %s: allowed=%s', async (from, to, allowed) => {
    const r = await reg.knock({ key: cast[from], to: cast[to].amid });
    expect(r.allowed, r.reason).toBe(allowed);
    expect(r.reason.length).toBeGreaterThan(10);
  });

  it('External is per policy: an allowlisted pair connects the parents, never their sub-agents', async () => {
    await reg.allowPair(cast.A.amid, cast.X.amid);
    expect(await reg.knock({ key: cast.A, to: cast.X.amid })).toMatchObject({
      allowed: true,
      code: 'allowlisted-pair',
    });
    expect(await reg.knock({ key: cast.X, to: cast.A.amid })).toMatchObject({
      allowed: true,
      code: 'allowlisted-pair',
    });
    expect((await reg.knock({ key: cast.a1, to: cast.X.amid })).allowed).toBe(false);
    expect((await reg.knock({ key: cast.X, to: cast.a1.amid })).allowed).toBe(false);
    expect((await reg.knock({ key: cast.B, to: cast.X.amid })).allowed).toBe(false);
    await reg.revokePair(cast.A.amid, cast.X.amid);
    expect(await reg.knock({ key: cast.A, to: cast.X.amid })).toMatchObject({
      allowed: false,
      code: 'not-allowlisted',
    });
  });

  it('discover shows each role exactly its reachable peers', async () => {
    const ids = async (who: keyof Cast) => (await reg.discover(cast[who].amid)).map((a) => a.amid).sort();
    const amids = (...who: Array<keyof Cast>) => who.map((w) => cast[w].amid).sort();
    expect(await ids('a1')).toEqual(amids('A', 'a11', 'a2'));
    expect(await ids('b11')).toEqual(amids('B', 'b1'));
    expect(await ids('A')).toEqual(amids('a1', 'a11', 'a2', 'B'));
    expect(await ids('X')).toEqual([]);
    expect((await reg.discover(cast.a11.amid)).find((a) => a.amid === cast.a1.amid)).toEqual({
      amid: cast.a1.amid,
      role: 'sub-agent',
      circle_id: cast.A.circle,
      parent_amid: cast.A.amid,
    });
  });
});

describe('intra-circle pipeline analyst -> viz -> writer', () => {
  it('keeps working under one parent, next to another circle', async () => {
    const reg = env.registry();
    const orchestrator = await topLevel(reg);
    const other = await topLevel(reg);
    const analyst = await subAgent(reg, orchestrator);
    const viz = await subAgent(reg, orchestrator);
    const writer = await subAgent(reg, orchestrator);
    const outsider = await subAgent(reg, other);

    expect(await reg.knock({ key: analyst, to: viz.amid })).toMatchObject({ allowed: true, code: 'same-circle' });
    expect(await reg.knock({ key: viz, to: writer.amid })).toMatchObject({ allowed: true, code: 'same-circle' });
    expect(await reg.knock({ key: writer, to: orchestrator.amid })).toMatchObject({ allowed: true, code: 'parent' });
    expect((await reg.knock({ key: viz, to: outsider.amid })).allowed).toBe(false);

    // The prompt viz gets names its parent and both pipeline neighbours, and nobody outside.
    const peers = await reg.discover(viz.amid);
    const prompt = trustCirclePrompt({
      self: { amid: viz.amid, circle_id: viz.circle, parent_amid: orchestrator.amid },
      peers,
      names: { [orchestrator.amid]: 'orchestrator', [analyst.amid]: 'analyst', [writer.amid]: 'writer' },
    });
    expect(prompt).toContain(`Your parent is orchestrator (${orchestrator.amid})`);
    expect(prompt).toContain(`analyst (${analyst.amid})`);
    expect(prompt).toContain(`writer (${writer.amid})`);
    expect(prompt).not.toContain(outsider.amid);
  });
});

describe('cross-circle bridge through both parents', () => {
  it('SubA1 -> ParentA -> ParentB -> SubB1, each hop recorded and audited', async () => {
    const reg = env.registry();
    const A = await topLevel(reg);
    const B = await topLevel(reg);
    const a1 = await subAgent(reg, A);
    const b1 = await subAgent(reg, B);

    const req = await reg.requestCrossCircle({ key: a1, to: b1.amid, message: 'need the Q3 chart' });
    expect(req).toMatchObject({ status: 'awaiting-source-parent', source_parent: A.amid, target_parent: B.amid });
    expect(await reg.bridgeFor(b1.amid)).toEqual([]);
    await expect(
      reg.decideCrossCircle({ key: B, requestId: req.request_id, decision: 'deliver' }),
    ).rejects.toMatchObject({
      name: 'CircleRefusedError',
      code: 'not-your-turn',
    });
    expect(await reg.decideCrossCircle({ key: A, requestId: req.request_id, decision: 'forward' })).toMatchObject({
      status: 'awaiting-target-parent',
    });
    expect((await reg.bridgeFor(B.amid)).map((r) => r.status)).toEqual(['awaiting-target-parent']);
    const done = await reg.decideCrossCircle({
      key: B,
      requestId: req.request_id,
      decision: 'deliver',
      reason: 'fine',
    });
    expect(done.hops.map((h) => [h.step, h.by])).toEqual([
      ['requested', a1.amid],
      ['forwarded', A.amid],
      ['delivered', B.amid],
    ]);
    expect(await reg.bridgeFor(b1.amid)).toMatchObject([
      { request_id: req.request_id, message: 'need the Q3 chart', status: 'delivered' },
    ]);
    const events = await reg.events();
    expect(events.events.filter((e) => e.kind === 'bridge-hop').map((e) => e.code)).toEqual([
      'requested',
      'forwarded',
      'delivered',
    ]);
    expect(events.by_code['not-your-turn']).toBe(1);
  });

  it('a declining parent stops the message', async () => {
    const reg = env.registry();
    const A = await topLevel(reg);
    const B = await topLevel(reg);
    const a1 = await subAgent(reg, A);
    const b1 = await subAgent(reg, B);
    const req = await reg.requestCrossCircle({ key: a1, to: b1.amid, message: 'hello' });
    expect(
      await reg.decideCrossCircle({ key: A, requestId: req.request_id, decision: 'decline', reason: 'out of scope' }),
    ).toMatchObject({
      status: 'declined',
      hops: [{ step: 'requested' }, { step: 'declined', by: A.amid, reason: 'out of scope' }],
    });
    await expect(
      reg.decideCrossCircle({ key: B, requestId: req.request_id, decision: 'deliver' }),
    ).rejects.toMatchObject({ code: 'already-decided' });
    expect(await reg.bridgeFor(b1.amid)).toEqual([]);
  });
});
