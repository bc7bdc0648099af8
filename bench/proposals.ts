/**
 * Proposal workflow figures (issue 2): submit -> final verdict per tier, sustained throughput with
 * 50 concurrent submitters, and the engine floor (empty workflow + one activity) beside them.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import pino from 'pino';
import { submitProposal } from '../src/client/proposals';
import type { proposalWorkflow } from '../src/workflows/proposal';
import type { ProposalOutcome } from '../src/contracts/status';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess, WORKFLOWS_PATH } from '../src/worker';
import { percentile, pool, summarize, timed, type Row } from './lib';

const N = Number(process.env.BENCH_N ?? 200);
const THROUGHPUT_TOTAL = Number(process.env.BENCH_THROUGHPUT_N ?? 1000);
const CONCURRENCY = 50;

function proposalOf(type: 'memory_write' | 'vault_note_create' | 'exec'): Record<string, unknown> {
  const id = randomUUID();
  const shapes = {
    memory_write: { target: { store: 'bench' }, parameters: { content: `bench ${id}` } },
    vault_note_create: { target: { vault: 'main', path: `notes/bench-${id}.md` }, parameters: { content: '# bench' } },
    exec: { target: { host: 'local' }, parameters: { command: ['echo', id] } },
  };
  return {
    proposal_id: id,
    agent_id: '@bench',
    action_type: type,
    justification: `bench ${id}`,
    cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/1' }],
    ...shapes[type],
  };
}

export async function benchProposals(opts: { address: string; namespace: string }): Promise<Row[]> {
  const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-'));
  // The full-judge row measures the rules path with no model: approving on the rules alone is this
  // bench's explicit choice (the default, escalate, would wait for a person).
  const policy = defaultPolicyWith({ judge: { withoutModel: 'approve' } }, { baseDir });
  const queues = taskQueuesFor(`bench-${randomUUID()}`);
  const floorQueue = `${queues.workflow}-floor`;
  const system = await startWorkersInProcess(opts.address, {
    namespace: opts.namespace,
    taskQueues: queues,
    policy,
    logger: pino({ level: 'silent' }),
    baseDir,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: silentBundler }),
  });
  const { client } = system;
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

  /** Submit -> the workflow's final outcome (verdict and execution). */
  const decide = async (p: Record<string, unknown>): Promise<ProposalOutcome> => {
    const { workflow_id } = await submitProposal(client, p, { taskQueue: queues.workflow });
    return client.workflow.getHandle<typeof proposalWorkflow>(workflow_id).result();
  };
  const rows: Row[] = [];
  try {
    // Warm-up: worker caches, connections, JIT.
    for (let i = 0; i < 20; i++) await decide(proposalOf('memory_write'));
    for (let i = 0; i < 20; i++)
      await client.workflow.execute('floorWorkflow', { taskQueue: floorQueue, workflowId: `floor-${randomUUID()}` });

    const floor: number[] = [];
    for (let i = 0; i < N; i++) {
      const [ms] = await timed(() =>
        client.workflow.execute('floorWorkflow', { taskQueue: floorQueue, workflowId: `floor-${randomUUID()}` }),
      );
      floor.push(ms);
    }
    const floorP95 = percentile(
      [...floor].sort((a, b) => a - b),
      95,
    );
    rows.push(summarize('engine floor: empty workflow + 1 activity', floor));

    const tiers: Array<[string, 'memory_write' | 'vault_note_create' | 'exec', string]> = [
      ['no-judge (memory_write, executed)', 'memory_write', 'executed'],
      ['lightweight (vault note, patterns)', 'vault_note_create', 'approved'],
      ['full-judge rules (exec echo, executed)', 'exec', 'executed'],
    ];
    for (const [name, type, expected] of tiers) {
      const samples: number[] = [];
      for (let i = 0; i < N; i++) {
        const [ms, out] = await timed(() => decide(proposalOf(type)));
        if (out.status !== expected) throw new Error(`bench ${name}: expected ${expected}, got ${out.status}`);
        samples.push(ms);
      }
      const p95 = percentile(
        [...samples].sort((a, b) => a - b),
        95,
      );
      rows.push(summarize(`${name}: submit -> final verdict`, samples, `p95 ${(p95 / floorP95).toFixed(2)}x floor`));
    }

    // Sustained throughput: 50 concurrent submitters, lightweight proposals.
    const items = Array.from({ length: THROUGHPUT_TOTAL }, () => proposalOf('vault_note_create'));
    const latencies: number[] = [];
    const start = performance.now();
    await pool(items, CONCURRENCY, async (p) => {
      const [ms] = await timed(() => decide(p));
      latencies.push(ms);
    });
    const seconds = (performance.now() - start) / 1000;
    rows.push(
      summarize(
        `throughput: ${CONCURRENCY} concurrent submitters (lightweight)`,
        latencies,
        `${(THROUGHPUT_TOTAL / seconds).toFixed(1)} proposals/s`,
      ),
    );

    const floorItems = Array.from({ length: THROUGHPUT_TOTAL }, () => 0);
    const floorLat: number[] = [];
    const fStart = performance.now();
    await pool(floorItems, CONCURRENCY, async () => {
      const [ms] = await timed(() =>
        client.workflow.execute('floorWorkflow', { taskQueue: floorQueue, workflowId: `floor-${randomUUID()}` }),
      );
      floorLat.push(ms);
    });
    const fSeconds = (performance.now() - fStart) / 1000;
    rows.push(
      summarize(
        `floor throughput: ${CONCURRENCY} concurrent`,
        floorLat,
        `${(THROUGHPUT_TOTAL / fSeconds).toFixed(1)} workflows/s`,
      ),
    );
  } finally {
    floor.shutdown();
    await floorRunning;
    await system.stop();
    rmSync(baseDir, { recursive: true, force: true });
  }
  return rows;
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
