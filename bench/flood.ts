/**
 * What one agent's flood does to another agent (issue 21, finding 6): p50/p95 of a second agent's lightweight
 * proposals (submit -> final verdict, one at a time) with no flood, and while a first agent sends 300 human-only
 * proposals (20 in flight), with and without the per-agent limits (`spec.limits`, the default policy's values).
 * `node --import tsx bench/flood.ts` alone, or section `flood` of `npm run bench`. BENCH_FLOOD_N sizes the flood
 * (default 300), BENCH_FLOOD_QUIET the no-flood rows (default 60); the flood rows count the second agent's proposals
 * that ended while the flood ran.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import pino from 'pino';
import { submitAndWait, type SubmitOptions } from '../src/client/proposals';
import { LimitExceededError } from '../src/contracts/errors';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { WORKFLOW_BUNDLER_OPTIONS, WORKFLOWS_PATH } from '../src/workflow-code';
import { pool, runAlone, summarize, timed, type BenchServer, type Row } from './lib';

const FLOOD = Number(process.env.BENCH_FLOOD_N ?? 300);
const QUIET = Number(process.env.BENCH_FLOOD_QUIET ?? 60);
const IN_FLIGHT = 20;

function note(agent: string): Record<string, unknown> {
  const id = randomUUID();
  return {
    proposal_id: id,
    agent_id: agent,
    action_type: 'vault_note_create',
    justification: `bench ${id}`,
    cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/1' }],
    target: { vault: 'main', path: `notes/bench-${id}.md` },
    parameters: { content: '# bench' },
  };
}

function payment(agent: string): Record<string, unknown> {
  const id = randomUUID();
  return {
    proposal_id: id,
    agent_id: agent,
    action_type: 'financial_op',
    justification: `bench ${id}`,
    cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/1' }],
    target: { account: 'ops' },
    parameters: { amount: 1, currency: 'EUR' },
  };
}

export async function benchFlood(server: BenchServer): Promise<Row[]> {
  const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-flood-'));
  const policy = defaultPolicyWith({}, { baseDir });
  const queues = taskQueuesFor(`bench-flood-${randomUUID()}`);
  const system = await startWorkersInProcess(server.address, {
    namespace: server.namespace,
    taskQueues: queues,
    policy,
    logger: pino({ level: 'silent' }),
    baseDir,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => console.error(m) },
      ...WORKFLOW_BUNDLER_OPTIONS,
    }),
  });
  const { client } = system;
  const limited: SubmitOptions = { taskQueue: queues.workflow, limits: { policy } };
  const unlimited: SubmitOptions = { taskQueue: queues.workflow };
  /** One lightweight proposal of `agent`, timed; it must be approved. */
  const quietOnce = async (agent: string, options: SubmitOptions): Promise<number> => {
    const [ms, out] = await timed(() => submitAndWait(client, note(agent), options));
    if (out.status !== 'approved') throw new Error(`bench flood: expected approved, got ${out.status}`);
    return ms;
  };
  /** The second agent's proposals, one at a time, for as long as `flood` runs: only those that ended before it did. */
  const during = async (flood: Promise<void>, agent: string, options: SubmitOptions) => {
    let done = false;
    const started = performance.now();
    let floodMs = 0;
    void flood.finally(() => {
      done = true;
      floodMs = performance.now() - started;
    });
    const samples: number[] = [];
    while (!done) {
      const ms = await quietOnce(agent, options);
      if (!done) samples.push(ms);
    }
    await flood;
    return { samples, floodMs };
  };
  const flood = (agent: string, options: SubmitOptions) => {
    const counts = { accepted: 0, refused: 0 };
    const run = pool(
      Array.from({ length: FLOOD }, (_, i) => i),
      IN_FLIGHT,
      async () => {
        try {
          const out = await submitAndWait(client, payment(agent), options);
          if (out.status !== 'awaiting_human') throw new Error(`bench flood: got ${out.status}`);
          counts.accepted++;
        } catch (err) {
          if (!(err instanceof LimitExceededError)) throw err;
          counts.refused++;
        }
      },
    );
    return { counts, run };
  };
  try {
    // Warm the workers and the limits' visibility queries.
    for (let i = 0; i < 10; i++) await quietOnce(`@warm-${i}`, limited);
    const rows: Row[] = [];
    const quietRun = async (agent: string, options: SubmitOptions) => {
      const samples: number[] = [];
      for (let i = 0; i < QUIET; i++) samples.push(await quietOnce(agent, options));
      return samples;
    };
    rows.push(summarize('second agent, no flood, no limits', await quietRun('@quiet-a', unlimited)));
    rows.push(summarize('second agent, no flood, limits checked', await quietRun('@quiet-b', limited)));
    for (const [label, options, agents] of [
      ['no limits', unlimited, ['@flood-a', '@quiet-c']],
      ['limits checked', limited, ['@flood-b', '@quiet-d']],
    ] as const) {
      const f = flood(agents[0], options);
      const d = await during(f.run, agents[1], options);
      rows.push(
        summarize(
          `second agent, during a ${FLOOD}-proposal flood, ${label}`,
          d.samples,
          `flood: ${f.counts.accepted} waiting for a person, ${f.counts.refused} refused, in ` +
            `${(d.floodMs / 1000).toFixed(1)} s`,
        ),
      );
    }
    return rows;
  } finally {
    await system.stop();
    rmSync(baseDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await runAlone(
    `One agent's flood and another's latency (issue 21): lightweight proposals of a second agent, submit -> verdict`,
    benchFlood,
  );
}
