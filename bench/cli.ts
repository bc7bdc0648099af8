/**
 * CLI start-up figures (issue 8): wall time of `agent-judge --help` and `agent-judge status <id>` as a user runs
 * them, a fresh `node` process each time. Starts its own in-memory Temporal dev server and in-process workers, settles
 * one memory_write proposal, then times each command. `npm run bench:cli`; `AGENT_JUDGE_BIN=a.mjs,b.mjs` times
 * several checkouts' CLIs (e.g. the one before the package was built) with their runs interleaved, so a machine
 * shared with other work slows each alike; `BENCH_CLI_RUNS` sets the runs (10).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import pino from 'pino';
import { submitProposal, waitUntilSettled } from '../src/client/proposals';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess, WORKFLOWS_PATH } from '../src/worker';
import { runAlone, summarize, type Row } from './lib';

const run = promisify(execFile);

const DEFAULT_BIN = fileURLToPath(new URL('../bin/agent-judge.mjs', import.meta.url));

/** Wall times (ms) of `runs` runs of `node <bin> ...args` for each bin, a new process each time, bins interleaved. */
async function timeCommand(label: string, bins: readonly string[], args: string[], runs: number): Promise<Row[]> {
  const samples = bins.map((): number[] => []);
  for (let i = 0; i < runs; i++) {
    for (const [b, bin] of bins.entries()) {
      const start = performance.now();
      await run(process.execPath, [bin, ...args]);
      samples[b]?.push(performance.now() - start);
    }
  }
  return bins.map((bin, b) => summarize(bins.length > 1 ? `${label} (${bin})` : label, samples[b] ?? []));
}

/** Times `--help` and `status <id>` of each CLI in `bins` against a settled proposal on `server`. */
export async function benchCli(
  server: { address: string; namespace: string },
  bins: readonly string[] = process.env.AGENT_JUDGE_BIN?.split(',') ?? [DEFAULT_BIN],
  runs = Number(process.env.BENCH_CLI_RUNS ?? 10),
): Promise<Row[]> {
  const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-cli-'));
  const taskQueues = taskQueuesFor(`bench-cli-${randomUUID()}`);
  const system = await startWorkersInProcess(server.address, {
    namespace: server.namespace,
    taskQueues,
    policy: defaultPolicyWith({}, { baseDir, env: {} }),
    logger: pino({ level: 'silent' }),
    baseDir,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: silentBundler }),
  });
  try {
    const started = await submitProposal(
      system.client,
      {
        proposal_id: randomUUID(),
        agent_id: '@engineering',
        action_type: 'memory_write',
        justification: 'bench: CLI start-up',
        cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/8' }],
        target: { store: 'memory' },
        parameters: { content: 'remember the milk' },
      },
      { taskQueue: taskQueues.workflow },
    );
    await waitUntilSettled(system.client, started.workflow_id);
    const target = ['--address', server.address, '--namespace', server.namespace];
    return [
      ...(await timeCommand('agent-judge --help', bins, ['--help'], runs)),
      ...(await timeCommand('agent-judge status <id>', bins, ['status', started.proposal_id, ...target], runs)),
    ];
  } finally {
    await system.stop();
    rmSync(baseDir, { recursive: true, force: true });
  }
}

const silentBundler = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await runAlone('CLI start-up, wall time of a new process', benchCli);
}
