/**
 * The engine's floor, measured (issue 12): one rig runs the empty workflow, the empty workflow + one activity and the
 * proposal tiers side by side on one server, so latency, CPU per request and task counts are compared in one run.
 * `npm run bench`'s table can call {@link startEngineRig}; run this file alone to compare dev server settings:
 * `node --import tsx bench/engine.ts` (BENCH_N rounds, default 100), which starts the stock server and ours and
 * interleaves them.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import vm from 'node:vm';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import pino from 'pino';
import { submitProposal } from '../src/client/proposals';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { WORKFLOW_BUNDLER_OPTIONS, WORKFLOWS_PATH } from '../src/workflow-code';
import { percentile } from './lib';
import { closedOutcome } from './capabilities';

/** What one request of the rig runs. */
export type EngineKind = 'empty' | 'empty+activity' | 'no-judge' | 'lightweight' | 'full-judge';
export const ENGINE_KINDS: readonly EngineKind[] = ['empty', 'empty+activity', 'no-judge', 'lightweight', 'full-judge'];

const PROPOSAL_KIND = {
  'no-judge': ['memory_write', 'executed'],
  lightweight: ['vault_note_create', 'approved'],
  'full-judge': ['exec', 'executed'],
} as const;

/** A proposal of one tier with fresh content (the workflow id derives from the content). */
export function benchProposal(kind: keyof typeof PROPOSAL_KIND): Record<string, unknown> {
  const id = randomUUID();
  const shapes = {
    memory_write: { target: { store: 'bench' }, parameters: { content: `bench ${id}` } },
    vault_note_create: { target: { vault: 'main', path: `notes/bench-${id}.md` }, parameters: { content: '# bench' } },
    exec: { target: { host: 'local' }, parameters: { command: ['echo', id] } },
  };
  const type = PROPOSAL_KIND[kind][0];
  return {
    proposal_id: id,
    agent_id: '@bench',
    action_type: type,
    justification: `bench ${id}`,
    cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/1' }],
    ...shapes[type],
  };
}

/** CPU time (user + system) a process has used so far, from /proc (Linux), in milliseconds. */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/** CPU time of this process (workers and client live here), in milliseconds. */
export function selfCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

export interface EngineRig {
  client: Client;
  /** The proposal workflows' task queue. */
  taskQueue: string;
  /** Runs one request of `kind` to its end; returns the workflow id. */
  run(kind: EngineKind): Promise<string>;
  stop(): Promise<void>;
}

const silentBundler = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** Proposal workers (default policy, rules-only approval) and a floor worker on one server. */
export async function startEngineRig(opts: {
  address: string;
  namespace: string;
  /** Workflow sources to bundle (default: this checkout's), e.g. an older checkout to compare against. */
  workflowsPath?: string;
}): Promise<EngineRig> {
  const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-engine-'));
  const policy = defaultPolicyWith({ judge: { withoutModel: 'approve' } }, { baseDir });
  const queues = taskQueuesFor(`engine-${randomUUID()}`);
  const floorQueue = `${queues.workflow}-floor`;
  const system = await startWorkersInProcess(opts.address, {
    namespace: opts.namespace,
    taskQueues: queues,
    policy,
    logger: pino({ level: 'silent' }),
    baseDir,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: opts.workflowsPath ?? WORKFLOWS_PATH,
      logger: silentBundler,
      // An older checkout's bundle is made as that checkout made it.
      ...(opts.workflowsPath ? {} : WORKFLOW_BUNDLER_OPTIONS),
    }),
  });
  const floor = await Worker.create({
    connection: system.native,
    namespace: opts.namespace,
    taskQueue: floorQueue,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./floor-workflow.ts', import.meta.url)),
      logger: silentBundler,
    }),
    activities: { async noop() {} },
  });
  const floorRunning = floor.run();
  const { client } = system;
  return {
    client,
    taskQueue: queues.workflow,
    async run(kind) {
      if (kind === 'empty' || kind === 'empty+activity') {
        const workflowId = `floor-${randomUUID()}`;
        const type = kind === 'empty' ? 'emptyWorkflow' : 'floorWorkflow';
        await client.workflow.execute(type, { taskQueue: floorQueue, workflowId });
        return workflowId;
      }
      const { workflow_id } = await submitProposal(client, benchProposal(kind), { taskQueue: queues.workflow });
      // Caller-performed approvals stay open until their token is redeemed: the bench performs them.
      const out = await closedOutcome(client, workflow_id);
      const expected = PROPOSAL_KIND[kind][1];
      if (out.status !== expected) throw new Error(`engine ${kind}: expected ${expected}, got ${out.status}`);
      return workflow_id;
    },
    async stop() {
      floor.shutdown();
      await floorRunning;
      await system.stop();
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
}

/** Event counts of one closed run, by event type (e.g. `WorkflowTaskScheduled`), read from the history. */
export async function historyCounts(client: Client, workflowId: string): Promise<Record<string, number>> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const counts: Record<string, number> = {};
  for (const e of history.events ?? []) {
    for (const [key, value] of Object.entries(e)) {
      if (!key.endsWith('EventAttributes') || value == null) continue;
      const name = key[0]!.toUpperCase() + key.slice(1, -'EventAttributes'.length);
      counts[name] = (counts[name] ?? 0) + 1;
    }
  }
  return counts;
}

/** The first workflow task's started -> completed time in the history (module evaluation + first activation). */
export async function firstTaskMs(client: Client, workflowId: string): Promise<number> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const started = events.find((e) => e.workflowTaskStartedEventAttributes);
  const completed = events.find((e) => e.workflowTaskCompletedEventAttributes);
  return eventMs(completed?.eventTime) - eventMs(started?.eventTime);
}

/** The first workflow task's wait for a worker (scheduled -> started), from the history: the dispatch delay. */
export async function firstTaskWaitMs(client: Client, workflowId: string): Promise<number> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const scheduled = events.find((e) => e.workflowTaskScheduledEventAttributes);
  const started = events.find((e) => e.workflowTaskStartedEventAttributes);
  return eventMs(started?.eventTime) - eventMs(scheduled?.eventTime);
}

function eventMs(t: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
}

/**
 * Runs `rounds` rounds; each round runs a block of `block` requests of every kind on every rig, in turn (interleaved,
 * so load from elsewhere on the machine hits every rig alike). Blocks, not single requests: a server that sees only
 * every other request would stay under rate limits it meets in real use.
 */
export async function interleaved<R extends string>(
  rigs: Record<R, EngineRig>,
  kinds: readonly EngineKind[],
  rounds: number,
  block = 10,
): Promise<Record<R, Record<EngineKind, number[]>> & { ids: Record<R, Record<EngineKind, string[]>> }> {
  const out = { ids: {} } as Record<R, Record<EngineKind, number[]>> & { ids: Record<R, Record<EngineKind, string[]>> };
  for (const r of Object.keys(rigs) as R[]) {
    out[r] = Object.fromEntries(kinds.map((k) => [k, []])) as never;
    out.ids[r] = Object.fromEntries(kinds.map((k) => [k, []])) as never;
  }
  for (let i = 0; i < rounds; i++) {
    for (const kind of kinds) {
      for (const r of Object.keys(rigs) as R[]) {
        for (let j = 0; j < block; j++) {
          const start = performance.now();
          const id = await rigs[r].run(kind);
          out[r][kind].push(performance.now() - start);
          out.ids[r][kind].push(id);
        }
      }
    }
  }
  return out;
}

/** Sustained throughput of one kind with `concurrency` submitters, and CPU per request of this process and a server. */
export async function throughput(
  rig: EngineRig,
  kind: EngineKind,
  total: number,
  concurrency: number,
  serverPid?: number,
): Promise<{ perSecond: number; selfCpuMs: number; serverCpuMs: number }> {
  let next = 0;
  const cpu0 = selfCpuMs();
  const server0 = serverPid ? processCpuMs(serverPid) : 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) await rig.run(kind);
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  return {
    perSecond: total / seconds,
    selfCpuMs: (selfCpuMs() - cpu0) / total,
    serverCpuMs: serverPid ? (processCpuMs(serverPid) - server0) / total : Number.NaN,
  };
}

/**
 * What a new workflow run pays to evaluate a workflow bundle's modules, measured the way the SDK's reused V8 context
 * does it: the bundle runs once, then each run gets a fresh module cache and calls `importWorkflows()`.
 * No server, no worker: the figure that `src/workflows` and `src/contracts` import choices move.
 */
export function bundleEvaluation(code: string, runs = 300): { modules: number; p10: number; p50: number } {
  const context = vm.createContext({}, { microtaskMode: 'afterEvaluate' });
  for (const name of ['TextEncoder', 'TextDecoder', 'URL', 'URLSearchParams', 'AbortController', 'console']) {
    context[name] = (globalThis as Record<string, unknown>)[name];
  }
  const shared = new Map<string | symbol, unknown>();
  let runCache: Map<string | symbol, unknown> | undefined;
  Object.defineProperty(context, '__webpack_module_cache__', {
    value: new Proxy(
      {},
      {
        get: (_, key) => shared.get(key) ?? runCache?.get(key),
        set: (_, key, value) => ((runCache ?? shared).set(key, value), true),
      },
    ),
  });
  new vm.Script(code).runInContext(context);
  // As the SDK does: modules a bundle preloads are evaluated once, before any run, and shared.
  vm.runInContext('__TEMPORAL__.preloadModules?.()', context);
  const temporal = vm.runInContext('__TEMPORAL__', context) as { importWorkflows(): unknown };
  const samples: number[] = [];
  let modules = 0;
  for (let i = 0; i < runs; i++) {
    runCache = new Map();
    const start = performance.now();
    temporal.importWorkflows();
    samples.push(performance.now() - start);
    modules = runCache.size;
  }
  samples.sort((a, b) => a - b);
  return { modules, p10: percentile(samples, 10), p50: percentile(samples, 50) };
}

/** p50/p95 of a sample list, as `50.1 / 70.2`. */
export function p50p95(samples: readonly number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  return `${percentile(s, 50).toFixed(1)} / ${percentile(s, 95).toFixed(1)}`;
}

async function compareSettings(): Promise<void> {
  const { DefaultLogger, Runtime } = await import('@temporalio/worker');
  const { startDevServer, DEV_SERVER_DYNAMIC_CONFIG } = await import('../src/devserver/server');
  const { findTemporalCli } = await import('../src/devserver/temporal-cli');
  const { createLogger } = await import('../src/cli/shared');
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const rounds = Number(process.env.BENCH_N ?? 100);
  const cliPath = findTemporalCli({ logger: createLogger() });
  const extra = process.env.BENCH_DYNAMIC_CONFIG ? (JSON.parse(process.env.BENCH_DYNAMIC_CONFIG) as object) : {};
  const configs = { stock: {}, ours: { ...DEV_SERVER_DYNAMIC_CONFIG, ...extra } };
  if (process.env.BENCH_BASELINE === 'ours') configs.stock = { ...DEV_SERVER_DYNAMIC_CONFIG };
  // BENCH_BASE_WORKFLOWS=<other checkout>/src/workflows/index.ts: one server (our settings), that code vs this code.
  const baseWorkflows = process.env.BENCH_BASE_WORKFLOWS;
  if (baseWorkflows) configs.stock = configs.ours;
  const oursServer = await startDevServer({ cliPath, headless: true, dynamicConfig: configs.ours });
  const servers = {
    stock: baseWorkflows ? oursServer : await startDevServer({ cliPath, headless: true, dynamicConfig: configs.stock }),
    ours: oursServer,
  };
  console.log(`# engine: ${JSON.stringify(configs)}; ${rounds} rounds; ${new Date().toISOString()}`);
  const idleMs = 20_000;
  const idle0 = { stock: processCpuMs(servers.stock.process.pid!), ours: processCpuMs(servers.ours.process.pid!) };
  await new Promise((r) => setTimeout(r, idleMs));
  for (const k of ['stock', 'ours'] as const) {
    const cpu = processCpuMs(servers[k].process.pid!) - idle0[k];
    console.log(`idle server CPU ${k}: ${((cpu / idleMs) * 100).toFixed(2)}% of a core over ${idleMs / 1000} s`);
  }
  const rigs = {
    stock: await startEngineRig({ ...servers.stock, workflowsPath: baseWorkflows }),
    ours: await startEngineRig(servers.ours),
  };
  if (baseWorkflows) console.log(`comparing ${baseWorkflows} (as "stock") with this checkout (as "ours")`);
  try {
    await interleaved(rigs, ENGINE_KINDS, 1); // warm-up
    const res = await interleaved(rigs, ENGINE_KINDS, rounds);
    console.log(`\nkind            stock p50 / p95    ours p50 / p95`);
    for (const kind of ENGINE_KINDS) {
      console.log(`${kind.padEnd(16)}${p50p95(res.stock[kind]).padEnd(19)}${p50p95(res.ours[kind])}`);
    }
    console.log(
      `\nfirst workflow task: wait for a worker (scheduled -> started) and run (started -> completed), p50 / p95`,
    );
    for (const kind of ENGINE_KINDS) {
      const cells: string[] = [];
      for (const r of ['stock', 'ours'] as const) {
        const ids = res.ids[r][kind];
        const waits = await Promise.all(ids.map((id) => firstTaskWaitMs(rigs[r].client, id)));
        const runs = await Promise.all(ids.map((id) => firstTaskMs(rigs[r].client, id)));
        cells.push(`${r} wait ${p50p95(waits)} run ${p50p95(runs)}`);
      }
      console.log(`${kind.padEnd(16)}${cells.join('   ')}`);
    }
    const total = Number(process.env.BENCH_THROUGHPUT_N ?? 300);
    console.log(`\nthroughput, 50 submitters, ${total} each: per second; CPU per request (bench process / server) ms`);
    for (const kind of ['empty', 'lightweight'] as const) {
      for (const r of ['stock', 'ours'] as const) {
        const t = await throughput(rigs[r], kind, total, 50, servers[r].process.pid);
        console.log(
          `${kind.padEnd(12)} ${r.padEnd(6)} ${t.perSecond.toFixed(1)}/s  ` +
            `cpu ${t.selfCpuMs.toFixed(1)} / ${t.serverCpuMs.toFixed(1)}`,
        );
      }
    }
  } finally {
    await rigs.stock.stop();
    await rigs.ours.stop();
    await servers.ours.stop();
    if (servers.stock !== servers.ours) await servers.stock.stop();
  }
}

/** `bench/engine.ts bundle A.js [B.js]`: module evaluation per run of prebuilt bundles, interleaved three times. */
function compareBundles(files: string[]): void {
  const codes = files.map((f) => readFileSync(f, 'utf8'));
  for (let round = 0; round < 3; round++) {
    codes.forEach((code, i) => {
      const r = bundleEvaluation(code);
      const size = (code.length / 1e6).toFixed(2);
      console.log(
        `${files[i]}: ${r.modules} modules, p10 ${r.p10.toFixed(2)} / p50 ${r.p50.toFixed(2)} ms, ${size} MB`,
      );
    });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv[2] === 'bundle') compareBundles(process.argv.slice(3));
  else await compareSettings();
}
