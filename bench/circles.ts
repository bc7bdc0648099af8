/**
 * Trust-circle figures (issue 5): KNOCK latency and throughput with 10,000 registered agents,
 * registration throughput, and the registry's history growth per 1,000 KNOCKs.
 *
 * Standalone: `node --import tsx bench/circles.ts` starts its own dev server.
 * BENCH_CIRCLES_SCALE=0.2 shrinks every count (for a quick look).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { generateIdentity, newNonce } from '../src/identity/keys';
import { signStatement } from '../src/circles/sign';
import { CIRCLE_REGISTRY_WORKFLOW_TYPE, type CircleRegistryInput } from '../src/circles/names';
import type { KeyFile } from '../src/contracts/identity';
import type { SignedKnock } from '../src/circles/schemas';
import { RegistryState, type RegistryHandover } from '../src/circles/state';
import { CircleRegistryClient } from '../src/client/circles';
import { createCircleActivities } from '../src/circles/activities';
import { pool, summarize, timed, type Row } from './lib';

const SCALE = Number(process.env.BENCH_CIRCLES_SCALE ?? '1');
const n = (count: number) => Math.max(10, Math.round(count * SCALE));

interface Cast {
  tops: KeyFile[];
  subs: Array<KeyFile & { parent: string }>;
  handover: RegistryHandover;
}

/**
 * 10,000 agents as a registry handover: 2,000 circles of one top-level agent and four
 * sub-agents each. The first circles use real key pairs (they knock); the rest carry random key
 * bytes, which the registry never verifies for agents that do not sign anything.
 */
function tenThousandAgents(realCircles: number): Cast {
  const circles = 2_000;
  const subsPerCircle = 4;
  const now = Date.now();
  const tops: KeyFile[] = [];
  const subs: Array<KeyFile & { parent: string }> = [];
  const handover: RegistryHandover = {
    v: 1,
    circles: [],
    orgs: ['default'],
    agents: [],
    pairs: [],
    nonces: [],
    operator_keys: [],
    operator_nonces: [],
    events: [],
    event_seq: 0,
    event_totals: { total: 0, by_kind: {}, by_code: {} },
    bridge: [],
    bridge_seq: 0,
    stats: {
      knocks: 0,
      knocks_allowed: 0,
      knocks_denied: 0,
      registered: circles,
      spawned: circles * subsPerCircle,
      retired: 0,
      generation: 0,
    },
  };
  for (let c = 0; c < circles; c++) {
    const real = c < realCircles;
    const top = real ? generateIdentity() : null;
    const topIndex = handover.agents.length;
    handover.circles.push([randomUUID(), topIndex]);
    handover.agents.push([top?.public_key ?? randomBytes(32).toString('base64url'), 0, c, -1, 0, 0, now, 0]);
    if (top) tops.push(top);
    for (let s = 0; s < subsPerCircle; s++) {
      const sub = real ? generateIdentity() : null;
      handover.agents.push([sub?.public_key ?? randomBytes(32).toString('base64url'), 1, c, topIndex, 0, 0, now, 0]);
      if (sub && top) subs.push({ ...sub, parent: top.amid });
    }
  }
  return { tops, subs, handover };
}

/** A mix like a busy mesh: 70 % allowed (parent, sibling), 30 % denied (another circle's sub-agent). */
function knockPlan(cast: Cast, count: number): Array<{ from: KeyFile; to: string }> {
  const plan: Array<{ from: KeyFile; to: string }> = [];
  for (let i = 0; i < count; i++) {
    const from = cast.subs[i % cast.subs.length] as KeyFile & { parent: string };
    const r = i % 10;
    const sibling = cast.subs.find((s) => s.parent === from.parent && s.amid !== from.amid) as KeyFile;
    const stranger = cast.subs[(i + 7) % cast.subs.length] as KeyFile & { parent: string };
    const to =
      r < 4 ? from.parent : r < 7 ? sibling.amid : stranger.parent === from.parent ? from.parent : stranger.amid;
    plan.push({ from, to });
  }
  return plan;
}

function signKnock(from: KeyFile, to: string): SignedKnock {
  const statement = { from: from.amid, to, time: Date.now(), nonce: newNonce() };
  return { statement, signature: signStatement('knock', statement, from.private_key) };
}

export async function benchCircles(opts: { address: string; namespace: string }): Promise<Row[]> {
  const rows: Row[] = [];
  const taskQueue = `bench-circles-${randomUUID().slice(0, 8)}`;
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../src/workflows/circle-registry.ts', import.meta.url)),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
  });
  const workerConnection = await NativeConnection.connect({ address: opts.address });
  const worker = await Worker.create({
    connection: workerConnection,
    namespace: opts.namespace,
    taskQueue,
    workflowBundle,
    activities: createCircleActivities({ operatorKeys: [] }),
  });
  const running = worker.run();
  const connection = await Connection.connect({ address: opts.address });
  const client = new Client({ connection, namespace: opts.namespace });
  const registry = (workflowId: string, config?: CircleRegistryInput['config']) =>
    new CircleRegistryClient({ client, taskQueue, workflowId, config });

  try {
    // -- registration throughput (fresh registry, 8 Updates in flight) -------------------------
    {
      const reg = registry(`bench-registration-${randomUUID().slice(0, 8)}`);
      await reg.ensureStarted();
      const tops = Array.from({ length: n(400) }, () => generateIdentity());
      const lat: number[] = [];
      let start = performance.now();
      await pool(tops, 8, async (key) => {
        const [ms] = await timed(() => reg.registerTopLevel({ public_key: key.public_key }));
        lat.push(ms);
      });
      let secs = (performance.now() - start) / 1000;
      rows.push(
        summarize('register top-level (8 in flight)', lat, `${(tops.length / secs).toFixed(0)} registrations/s`),
      );

      const children = tops.map((parent) => ({ parent, child: generateIdentity() }));
      const spawnLat: number[] = [];
      start = performance.now();
      await pool(children, 8, async ({ parent, child }) => {
        const [ms] = await timed(() => reg.spawnSubAgent({ parentKey: parent, childPublicKey: child.public_key }));
        spawnLat.push(ms);
      });
      secs = (performance.now() - start) / 1000;
      rows.push(
        summarize(
          'spawn sub-agent, signed membership (8 in flight)',
          spawnLat,
          `${(children.length / secs).toFixed(0)} spawns/s (incl. parent lookup)`,
        ),
      );
    }

    // -- 10,000 agents ---------------------------------------------------------------------------
    const cast = tenThousandAgents(40);
    const handoverBytes = JSON.stringify(cast.handover).length;

    // Decision latency inside the registry (what the workflow spends per KNOCK), in-process.
    {
      const state = RegistryState.fromHandover(cast.handover, {}, { newCircleId: randomUUID });
      const plan = knockPlan(cast, n(1_000)).map(({ from, to }) => signKnock(from, to));
      const lat: number[] = [];
      for (const knock of plan) {
        const t = performance.now();
        state.knock(knock, Date.now());
        lat.push(performance.now() - t);
      }
      rows.push(
        summarize(
          'knock decision in registry (verify + replay + policy)',
          lat,
          '10,000 agents; pure-JS Ed25519, no Temporal',
        ),
      );
    }

    const workflowId = `bench-knock-${randomUUID().slice(0, 8)}`;
    const started = performance.now();
    await client.workflow.start(CIRCLE_REGISTRY_WORKFLOW_TYPE, {
      workflowId,
      taskQueue,
      args: [
        {
          handover: cast.handover,
          config: { maxUpdatesPerRun: 1_900, maxHistoryEvents: 9_000 },
        } satisfies CircleRegistryInput,
      ],
    });
    const reg = registry(workflowId);
    const info0 = await reg.runInfo();
    rows.push({
      name: 'registry with 10,000 agents: start + first query',
      n: 1,
      p50: performance.now() - started,
      note: `handover ${(handoverBytes / 1024).toFixed(0)} KiB`,
    });

    // Warm-up (first verify builds noble's precomputed tables, sticky cache fills).
    for (const { from, to } of knockPlan(cast, 20)) await reg.knock({ key: from, to });

    {
      const historyBytes = async () => {
        const desc = await client.workflow.getHandle(workflowId).describe();
        return Number(
          (desc.raw.workflowExecutionInfo as { historySizeBytes?: unknown } | null | undefined)?.historySizeBytes ?? 0,
        );
      };
      const before = await reg.runInfo();
      const bytesBefore = await historyBytes();
      const plan = knockPlan(cast, n(1_000)).map(({ from, to }) => signKnock(from, to));
      const lat: number[] = [];
      const start = performance.now();
      await pool(plan, 8, async (knock) => {
        const [ms] = await timed(() => reg.knockSigned(knock));
        lat.push(ms);
      });
      const secs = (performance.now() - start) / 1000;
      rows.push(
        summarize('knock round trip, 8 in flight (10,000 agents)', lat, `${(plan.length / secs).toFixed(0)} knocks/s`),
      );
      const after = await reg.runInfo();
      const bytesAfter = await historyBytes();
      if (after.run_id === before.run_id) {
        const perThousand = ((after.history_length - before.history_length) / plan.length) * 1000;
        const kib = (((bytesAfter - bytesBefore) / plan.length) * 1000) / 1024;
        rows.push({
          name: 'history growth per 1,000 knocks (8 in flight)',
          n: plan.length,
          note: `${perThousand.toFixed(0)} events, ${kib.toFixed(0)} KiB; hand-over every 1,000 Updates by default`,
        });
      } else {
        rows.push({
          name: 'history growth per 1,000 knocks',
          n: plan.length,
          note: 'run continued as new during the measurement; rerun',
        });
      }
      {
        const plan = knockPlan(cast, n(500));
        const lat: number[] = [];
        let denied = 0;
        for (const { from, to } of plan) {
          const knock = signKnock(from, to);
          const [ms, r] = await timed(() => reg.knockSigned(knock));
          lat.push(ms);
          if (!r.allowed) denied++;
        }
        rows.push(
          summarize(
            'knock round trip, one at a time (10,000 agents)',
            lat,
            `client -> Temporal -> registry -> client; ${denied} denied; target p95 < 10 ms`,
          ),
        );
      }

      // Sequential knocks cost more history: one workflow task per Update.
      const seqBefore = await reg.runInfo();
      const seqPlan = knockPlan(cast, 100);
      for (const { from, to } of seqPlan) await reg.knock({ key: from, to });
      const seqAfter = await reg.runInfo();
      if (seqAfter.run_id === seqBefore.run_id) {
        rows.push({
          name: 'history growth per 1,000 knocks (one at a time)',
          n: seqPlan.length,
          note: `${(((seqAfter.history_length - seqBefore.history_length) / seqPlan.length) * 1000).toFixed(0)} events`,
        });
      }
      rows.push({
        name: 'continue-as-new hand-overs during the bench',
        n: 1,
        note: `${seqAfter.generation - info0.generation} (registry set to hand over every 1,900 Updates)`,
      });
    }
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await workerConnection.close();
  }
  return rows;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { runAlone } = await import('./lib');
  await runAlone('Trust circles (issue 5)', benchCircles);
}
