/**
 * Long life: under concurrent load the registry continues as new several times and loses
 * nothing: agents, allowlist, replay guard, governance events (exact counts), bridge requests.
 */
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { generateIdentity } from '../../src/identity/keys';
import type { KeyFile } from '../../src/contracts/identity';
import type { KnockResult } from '../../src/circles/types';
import { knockBy } from '../helpers/circles-fixtures';
import { registryBundle, startCirclesEnv, type CirclesEnv } from '../helpers/circles-env';

let env: CirclesEnv;
beforeAll(async () => {
  env = await startCirclesEnv(inject('temporalAddress'), inject('temporalNamespace'), 'can');
});
afterAll(async () => env?.stop());

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

describe('continue-as-new under load', () => {
  it('rolls over repeatedly while knocks run concurrently, and loses nothing', async () => {
    const reg = env.registry({ maxUpdatesPerRun: 30, maxEventsHeld: 8 });
    const firstRun = await reg.runInfo();

    const tops: Array<KeyFile & { circle: string }> = [];
    for (const org of ['default', 'default', 'default', 'partner']) {
      const key = generateIdentity();
      tops.push({ ...key, circle: (await reg.registerTopLevel({ public_key: key.public_key, org })).circle_id });
    }
    const subs: Array<KeyFile & { parent: string }> = [];
    await pool([...Array(12).keys()], 4, async (i) => {
      const parent = tops[i % 3] as KeyFile;
      const key = generateIdentity();
      await reg.spawnSubAgent({ parentKey: parent, childPublicKey: key.public_key });
      subs.push({ ...key, parent: parent.amid });
    });
    await reg.allowPair(tops[0]!.amid, tops[3]!.amid);

    // 160 knocks, 8 in flight: sub -> parent (allowed) and sub -> someone else's sub (denied).
    const plan = [...Array(160).keys()].map((i) => {
      const from = subs[i % subs.length]!;
      const to = i % 2 === 0 ? from.parent : subs.find((s) => s.parent !== from.parent)!.amid;
      return { from, to };
    });
    const results: KnockResult[] = [];
    const early = knockBy(subs[0]!, subs[0]!.parent);
    results.push(await reg.knockSigned(early));
    await pool(plan, 8, async ({ from, to }) => {
      results.push(await reg.knock({ key: from, to }));
    });
    const denied = results.filter((r) => !r.allowed).length;
    expect(denied).toBe(80);

    const info = await reg.runInfo();
    expect(info.run_id).not.toBe(firstRun.run_id);
    expect(info.generation).toBeGreaterThanOrEqual(5);

    const dump = await reg.dump();
    expect(dump.agents).toHaveLength(16);
    for (const s of subs)
      expect(dump.agents.find((a) => a.amid === s.amid)).toMatchObject({
        role: 'sub-agent',
        parent_amid: s.parent,
        status: 'active',
      });
    expect(dump.allowlist).toEqual([
      expect.objectContaining({
        a: [tops[0]!.amid, tops[3]!.amid].sort()[0],
        b: [tops[0]!.amid, tops[3]!.amid].sort()[1],
      }),
    ]);
    expect(dump.stats).toMatchObject({
      knocks: 161,
      knocks_allowed: 81,
      knocks_denied: 80,
      registered: 4,
      spawned: 12,
    });
    // Exact counts even though only 8 events are held in full.
    expect(dump.event_totals).toMatchObject({ total: 80, by_code: { 'cross-circle': 80 } });
    const events = await reg.events();
    expect(events).toMatchObject({ total: 80, held: 8, archived: 72 });
    expect(events.events.map((e) => e.seq)).toEqual([73, 74, 75, 76, 77, 78, 79, 80]);
    // The replay guard crossed the run boundaries too.
    expect(await reg.knockSigned(early)).toMatchObject({ allowed: false, code: 'replay' });
  });

  it('a hand-over changes nothing but the run: state before and after compared', async () => {
    const reg = env.registry({ maxUpdatesPerRun: 12 });
    const A = generateIdentity();
    const X = generateIdentity();
    await reg.registerTopLevel({ public_key: A.public_key });
    await reg.registerTopLevel({ public_key: X.public_key, org: 'partner' });
    const a1 = generateIdentity();
    await reg.spawnSubAgent({ parentKey: A, childPublicKey: a1.public_key });
    await reg.allowPair(A.amid, X.amid);
    await reg.knock({ key: a1, to: X.amid });
    const b = generateIdentity();
    await reg.spawnSubAgent({ parentKey: X, childPublicKey: b.public_key });
    await reg.requestCrossCircle({ key: a1, to: b.amid, message: 'kept across runs' });

    const before = await reg.dump();
    const run = (await reg.runInfo()).run_id;
    // Revoking a pair that is not there changes no state; it only counts as an Update.
    const Y = generateIdentity();
    await reg.registerTopLevel({ public_key: Y.public_key });
    const beforeWithY = await reg.dump();
    while ((await reg.runInfo()).run_id === run) await reg.revokePair(A.amid, Y.amid);
    const after = await reg.dump();
    expect(after).toEqual({
      ...beforeWithY,
      stats: { ...beforeWithY.stats, generation: beforeWithY.stats.generation + 1 },
    });
    expect(after.bridge).toEqual(before.bridge);
    expect(await reg.bridgeFor(a1.amid)).toMatchObject([
      { message: 'kept across runs', status: 'awaiting-source-parent' },
    ]);
  });

  it('the registry history replays deterministically', async () => {
    const reg = env.registry();
    const A = generateIdentity();
    await reg.registerTopLevel({ public_key: A.public_key });
    const a1 = generateIdentity();
    await reg.spawnSubAgent({ parentKey: A, childPublicKey: a1.public_key });
    await reg.knock({ key: a1, to: A.amid });
    await reg.knock({ key: A, to: generateIdentity().amid });
    const history = await env.client.workflow.getHandle(reg.workflowId).fetchHistory();
    await expect(
      Worker.runReplayHistory({ workflowBundle: await registryBundle() }, history, reg.workflowId),
    ).resolves.toBeUndefined();
  });
});
