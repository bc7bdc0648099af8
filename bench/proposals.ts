/**
 * Proposal workflow figures (issues 2 and 12), every row against the engine's floor measured in the same run:
 * an empty workflow, an empty workflow with one activity, then a proposal per tier (no-judge executed, lightweight,
 * full-judge on the rules). Interleaved: each round runs a small batch of every row in turn (the order rotating), so
 * whatever else the machine does slows every row alike. Three tables: latency one at a time (p50/p95/p99 and the
 * ratio to the empty workflow), throughput with 50 concurrent submitters, and CPU per operation (this process, which
 * runs the workers and the client, plus the Temporal server's process from /proc).
 *
 * Sizes: BENCH_N operations per row one at a time (default 150), BENCH_THROUGHPUT_N per row at 50 in flight
 * (default 300), in rounds of BENCH_BATCH (5) and BENCH_THROUGHPUT_BATCH (100).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import pino from 'pino';
import { reserveProposalId, submitAndWait } from '../src/client/proposals';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { WORKFLOW_BUNDLER_OPTIONS, WORKFLOWS_PATH } from '../src/workflow-code';
import {
  fmt,
  ownCpuMs,
  percentileOf,
  pool,
  processCpuMs,
  rotated,
  summarize,
  type BenchServer,
  type Row,
  type Target,
} from './lib';

const N = Number(process.env.BENCH_N ?? 150);
const THROUGHPUT_N = Number(process.env.BENCH_THROUGHPUT_N ?? 300);
const BATCH = Number(process.env.BENCH_BATCH ?? 5);
const THROUGHPUT_BATCH = Number(process.env.BENCH_THROUGHPUT_BATCH ?? 100);
const CONCURRENCY = 50;
const WARM_UP = 10;

type ProposalType = 'memory_write' | 'vault_note_create' | 'exec';

/** A proposal of `type` with fresh content; `named`: no proposal_id, so it is named by its content (no reservation). */
function proposalOf(type: ProposalType, named = false): Record<string, unknown> {
  const id = randomUUID();
  const shapes = {
    memory_write: { target: { store: 'bench' }, parameters: { content: `bench ${id}` } },
    vault_note_create: { target: { vault: 'main', path: `notes/bench-${id}.md` }, parameters: { content: '# bench' } },
    exec: { target: { host: 'local' }, parameters: { command: ['echo', id] } },
  };
  return {
    ...(named ? {} : { proposal_id: id }),
    agent_id: '@bench',
    action_type: type,
    justification: `bench ${id}`,
    cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/1' }],
    ...shapes[type],
  };
}

/** One row of the tables: what one operation is, and how to run it once. */
interface Kind {
  key: 'empty' | 'activity' | 'reservation' | 'no-judge' | 'lightweight' | 'lightweight-named' | 'full-judge';
  label: string;
  run: () => Promise<void>;
  /** Server work an operation leaves behind after it returns, counted with it: waited for before CPU is read. */
  settleMs?: number;
}

/** What a row measured over the whole run. */
interface Measured {
  latencies: number[];
  /** Latencies under 50 concurrent submitters. */
  loaded: number[];
  throughputOps: number;
  throughputMs: number;
  ownCpuMs: number;
  serverCpuMs: number;
}

const p = percentileOf;

/** How the section was sized, for the tables' titles. */
export const PROPOSAL_BENCH_SIZES = { N, THROUGHPUT_N, BATCH, THROUGHPUT_BATCH, CONCURRENCY };

/** The section's rows and the issue's targets they bound. */
export interface ProposalBench {
  latency: Row[];
  throughput: Row[];
  /** measure, n, total, this process (workers + client), server, ratio to the empty workflow's total. */
  cpu: string[][];
  targets: Target[];
}

export async function benchProposals(server: BenchServer): Promise<ProposalBench> {
  const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-'));
  // The full-judge row measures the rules path with no model: approving on the rules alone is this
  // bench's explicit choice (the default, escalate, would wait for a person).
  const policy = defaultPolicyWith({ judge: { withoutModel: 'approve' } }, { baseDir });
  const queues = taskQueuesFor(`bench-${randomUUID()}`);
  const floorQueue = `${queues.workflow}-floor`;
  const system = await startWorkersInProcess(server.address, {
    namespace: server.namespace,
    taskQueues: queues,
    policy,
    logger: pino({ level: 'silent' }),
    baseDir,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      logger: silentBundler,
      ...WORKFLOW_BUNDLER_OPTIONS,
    }),
  });
  const { client } = system;
  const floor = await Worker.create({
    connection: system.native,
    namespace: server.namespace,
    taskQueue: floorQueue,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./floor-workflow.ts', import.meta.url)),
      logger: silentBundler,
    }),
    activities: { async noop() {} },
  });
  const floorRunning = floor.run();

  const floorRun = (type: 'emptyWorkflow' | 'floorWorkflow') => async () => {
    await client.workflow.execute(type, { taskQueue: floorQueue, workflowId: `floor-${randomUUID()}` });
  };
  /** Submit and wait (one Update-with-Start call, as `propose --wait`) for the final outcome. */
  const proposal =
    (type: ProposalType, expected: string, named = false) =>
    async () => {
      const out = await submitAndWait(client, proposalOf(type, named), { taskQueue: queues.workflow });
      if (out.status !== expected) {
        const why = out.execution?.error ?? out.verdict?.reason ?? '';
        throw new Error(`bench ${type}: expected ${expected}, got ${out.status}${why ? ` (${why})` : ''}`);
      }
    };
  const kinds: Kind[] = [
    { key: 'empty', label: 'empty workflow', run: floorRun('emptyWorkflow') },
    { key: 'activity', label: 'empty workflow + 1 activity', run: floorRun('floorWorkflow') },
    // What a submission under a chosen proposal_id pays beside its proposal's start (race-free proposal_id
    // uniqueness): a start that runs 2 s later, one workflow task that completes it, counted with it.
    {
      key: 'reservation',
      label: 'proposal_id reservation alone (part of the chosen-id rows below)',
      run: () => reserveProposalId(client, randomUUID(), `proposal-${randomUUID().replace(/-/g, '')}`, queues.workflow),
      settleMs: 3000,
    },
    { key: 'no-judge', label: 'no-judge (memory_write, executed)', run: proposal('memory_write', 'executed') },
    { key: 'lightweight', label: 'lightweight (vault note, approved)', run: proposal('vault_note_create', 'approved') },
    // The same, submitted without a proposal_id: named by its content (its workflow id), which needs no reservation.
    // What the MCP proxy does for every judged call.
    {
      key: 'lightweight-named',
      label: 'lightweight, named by its content (no reservation)',
      run: proposal('vault_note_create', 'approved', true),
    },
    { key: 'full-judge', label: 'full-judge rules (exec echo, executed)', run: proposal('exec', 'executed') },
  ];
  const measured = new Map<Kind['key'], Measured>(
    kinds.map((k) => [
      k.key,
      { latencies: [], loaded: [], throughputOps: 0, throughputMs: 0, ownCpuMs: 0, serverCpuMs: 0 },
    ]),
  );
  const of = (key: Kind['key']) => measured.get(key) as Measured;

  try {
    // Warm-up: worker caches, connections, JIT.
    for (const kind of kinds) for (let i = 0; i < WARM_UP; i++) await kind.run();

    for (let round = 0, done = 0; done < N; round++, done += BATCH) {
      const size = Math.min(BATCH, N - done);
      for (const kind of rotated(kinds, round)) {
        for (let i = 0; i < size; i++) {
          const start = performance.now();
          await kind.run();
          of(kind.key).latencies.push(performance.now() - start);
        }
      }
    }

    for (let round = 0, done = 0; done < THROUGHPUT_N; round++, done += THROUGHPUT_BATCH) {
      const size = Math.min(THROUGHPUT_BATCH, THROUGHPUT_N - done);
      for (const kind of rotated(kinds, round)) {
        const m = of(kind.key);
        const cpu0 = ownCpuMs();
        const server0 = processCpuMs(server.pid);
        const start = performance.now();
        await pool(
          Array.from({ length: size }, (_, i) => i),
          CONCURRENCY,
          async () => {
            const t0 = performance.now();
            await kind.run();
            m.loaded.push(performance.now() - t0);
          },
        );
        m.throughputMs += performance.now() - start;
        m.throughputOps += size;
        if (kind.settleMs) await new Promise((r) => setTimeout(r, kind.settleMs));
        m.ownCpuMs += ownCpuMs() - cpu0;
        m.serverCpuMs += processCpuMs(server.pid) - server0;
      }
    }
  } finally {
    if (floor.getState() === 'RUNNING') floor.shutdown();
    await floorRunning;
    await system.stop();
    rmSync(baseDir, { recursive: true, force: true });
  }

  const empty = of('empty');
  const emptyP50 = p(empty.latencies, 50);
  const emptyP95 = p(empty.latencies, 95);
  const rate = (m: Measured) => (m.throughputOps * 1000) / m.throughputMs;
  const emptyRate = rate(empty);
  const latency = kinds.map((k) => {
    const m = of(k.key);
    const note =
      k.key === 'empty'
        ? 'the floor'
        : `${ratio(p(m.latencies, 50), emptyP50)} / ${ratio(p(m.latencies, 95), emptyP95)}`;
    return summarize(k.label, m.latencies, note);
  });
  const throughput = kinds.map((k) => {
    const m = of(k.key);
    const note = `${fmt(rate(m))}/s${k.key === 'empty' ? '' : `, ${(rate(m) / emptyRate).toFixed(2)}x empty`}`;
    return summarize(`${k.label}, ${CONCURRENCY} in flight`, m.loaded, note);
  });
  const emptyCpu = (empty.ownCpuMs + empty.serverCpuMs) / empty.throughputOps;
  const cpu = kinds.map((k): string[] => {
    const m = of(k.key);
    const own = m.ownCpuMs / m.throughputOps;
    const srv = m.serverCpuMs / m.throughputOps;
    return [
      k.label,
      String(m.throughputOps),
      fmt(own + srv),
      fmt(own),
      fmt(srv),
      `${((own + srv) / emptyCpu).toFixed(2)}x`,
    ];
  });

  const activity = of('activity');
  const lightweight = of('lightweight');
  const named = of('lightweight-named');
  const noJudge = of('no-judge');
  const targets: Target[] = [
    { name: 'lightweight p95', value: p(lightweight.latencies, 95), limit: 50, kind: 'max', unit: ' ms' },
    { name: 'lightweight p95, named by content', value: p(named.latencies, 95), limit: 50, kind: 'max', unit: ' ms' },
    {
      name: 'lightweight p95 / empty p95',
      value: p(lightweight.latencies, 95) / emptyP95,
      limit: 1.5,
      kind: 'max',
      unit: 'x',
    },
    {
      name: 'lightweight p95 / empty p95, named by content',
      value: p(named.latencies, 95) / emptyP95,
      limit: 1.5,
      kind: 'max',
      unit: 'x',
    },
    {
      name: 'no-judge p95 / empty+activity p95',
      value: p(noJudge.latencies, 95) / p(activity.latencies, 95),
      limit: 2,
      kind: 'max',
      unit: 'x',
    },
    {
      name: `lightweight throughput / empty's (${CONCURRENCY} in flight)`,
      value: rate(lightweight) / emptyRate,
      limit: 0.7,
      kind: 'min',
      unit: 'x',
    },
    {
      name: `lightweight named by content: throughput / empty's`,
      value: rate(named) / emptyRate,
      limit: 0.7,
      kind: 'min',
      unit: 'x',
    },
  ];
  return {
    latency,
    throughput,
    cpu,
    targets,
  };
}

function ratio(value: number, floor: number): string {
  return `${(value / floor).toFixed(2)}x`;
}

const silentBundler = {
  log() {},
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error(m: string) {
    console.error(m);
  },
};
