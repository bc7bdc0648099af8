/**
 * Where a proposal's CPU goes (issue 12). `node --cpu-prof --cpu-prof-dir=DIR --import tsx bench/profile-proposals.ts`
 * starts a dev server and the workers in this process, runs BENCH_N proposals of BENCH_KIND (lightweight, no-judge,
 * full-judge; default lightweight) at BENCH_IN_FLIGHT (default 50) in flight, BENCH_ROUNDS times, and prints CPU ms
 * per proposal of this process (workers + client) and of the server. Node writes one profile per thread; the workflow
 * thread's is the one whose samples are in `workflow-bundle-*.js`.
 * `node --import tsx bench/profile-proposals.ts summary FILE.cpuprofile [N]` prints a profile's heaviest functions
 * (self and inclusive) and its busy time.
 *
 * `BENCH_NAMED=1` submits them without a proposal_id (named by their content: no reservation).
 *
 * Also `BENCH_KIND=reservation`: the proposal_id reservation alone (what every submission pays before its proposal
 * starts), with its close (1 s later, by its execution timeout) counted in the round.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import pino from 'pino';
import { reserveProposalId, submitAndWait } from '../src/client/proposals';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { WORKFLOW_BUNDLER_OPTIONS, WORKFLOWS_PATH } from '../src/workflow-code';
import { startDevServer } from '../src/devserver/server';
import { createLogger } from '../src/cli/shared';
import { findTemporalCli } from '../src/devserver/temporal-cli';
import { benchProposal, processCpuMs, selfCpuMs } from './engine';
import { pool } from './lib';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Busy time and the heaviest functions of a `.cpuprofile` (self time, and inclusive time counted once per stack). */
export function summarizeProfile(path: string, top = 30): string {
  const p = JSON.parse(readFileSync(path, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = ({ callFrame: f }: ProfileNode) =>
    `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber}`;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const us = p.timeDeltas[i + 1] ?? 0;
    total += us;
    const node = byId.get(id) as ProfileNode;
    self.set(name(node), (self.get(name(node)) ?? 0) + us);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const key = name(byId.get(cur) as ProfileNode);
      if (!seen.has(key)) inclusive.set(key, (inclusive.get(key) ?? 0) + us);
      seen.add(key);
    }
  });
  const idle = [...self].filter(([k]) => k.startsWith('(idle)')).reduce((a, [, v]) => a + v, 0);
  const rows = (m: Map<string, number>) =>
    [...m]
      .filter(([k]) => !k.startsWith('(idle)') && !k.startsWith('(root)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([k, v]) =>
          `${(v / 1000).toFixed(0).padStart(8)} ms ${((100 * v) / (total - idle)).toFixed(1).padStart(5)} %  ${k}`,
      )
      .join('\n');
  return [
    `${path}: ${((total - idle) / 1000).toFixed(0)} ms busy of ${(total / 1000).toFixed(0)} ms (% below: of busy time)`,
    '-- self',
    rows(self),
    '-- inclusive',
    rows(inclusive),
  ].join('\n');
}

/**
 * A dev server and every worker in this process, the lightweight tier approving on rules alone (no model); `stop`
 * ends both and removes the temporary folder. For the profiling and tracing scripts.
 */
export async function startBenchSystem(prefix: string) {
  const server = await startDevServer({ cliPath: findTemporalCli({ logger: createLogger() }), headless: true });
  const baseDir = mkdtempSync(join(tmpdir(), `agent-judge-${prefix}-`));
  const queues = taskQueuesFor(`${prefix}-${randomUUID()}`);
  const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error };
  const system = await startWorkersInProcess(server.address, {
    namespace: server.namespace,
    taskQueues: queues,
    policy: defaultPolicyWith({ judge: { withoutModel: 'approve' } }, { baseDir }),
    logger: pino({ level: 'silent' }),
    baseDir,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      logger: quiet,
      ...WORKFLOW_BUNDLER_OPTIONS,
    }),
  });
  const stop = async () => {
    await system.stop();
    await server.stop();
    rmSync(baseDir, { recursive: true, force: true });
  };
  return { server, system, queues, stop };
}

async function profileRun(): Promise<void> {
  const kind = (process.env.BENCH_KIND ?? 'lightweight') as 'lightweight' | 'no-judge' | 'full-judge' | 'reservation';
  const n = Number(process.env.BENCH_N ?? 300);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 1);
  const inFlight = Number(process.env.BENCH_IN_FLIGHT ?? 50);
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const { server, system, queues, stop } = await startBenchSystem('profile');
  const once = async () => {
    if (kind === 'reservation') {
      await reserveProposalId(system.client, randomUUID(), `proposal-${randomUUID().replace(/-/g, '')}`);
    } else {
      const proposal = benchProposal(kind);
      if (process.env.BENCH_NAMED) delete proposal.proposal_id;
      await submitAndWait(system.client, proposal, { taskQueue: queues.workflow });
    }
  };
  try {
    for (let i = 0; i < 20; i++) await once(); // warm-up
    for (let r = 0; r < rounds; r++) {
      const cpu0 = selfCpuMs();
      const server0 = processCpuMs(server.process.pid as number);
      const start = performance.now();
      await pool(
        Array.from({ length: n }, (_, i) => i),
        inFlight,
        once,
      );
      const ms = performance.now() - start;
      if (kind === 'reservation') await new Promise((done) => setTimeout(done, 1500));
      const own = (selfCpuMs() - cpu0) / n;
      const srv = (processCpuMs(server.process.pid as number) - server0) / n;
      console.log(
        `${kind}: ${n} at ${inFlight} in flight, ${((n * 1000) / ms).toFixed(1)}/s, CPU ms per op: ` +
          `workers + client ${own.toFixed(1)}, server ${srv.toFixed(1)}`,
      );
    }
  } finally {
    await stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv[2] === 'summary')
    console.log(summarizeProfile(process.argv[3] as string, Number(process.argv[4] ?? 30)));
  else await profileRun();
}
