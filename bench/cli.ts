/**
 * CLI start-up figures (issues 8, 43): wall time of `agent-judge --help`, `status <id>` and `list` as a user runs
 * them, a fresh `node` process each time. Starts its own in-memory Temporal dev server and in-process workers, settles
 * one memory_write proposal, then times each command. `npm run bench:cli`; `AGENT_JUDGE_BIN=a.mjs,b.mjs` times
 * several checkouts' CLIs (e.g. the one before the package was built) with their runs interleaved, so a machine
 * shared with other work slows each alike; `BENCH_CLI_RUNS` sets the runs (20). The default CLI is this checkout's
 * built one: dist/ is rebuilt first when a source is newer (`npm run build -- --if-stale`).
 */
import { execFile, execFileSync } from 'node:child_process';
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
import { startWorkersInProcess } from '../src/worker';
import { WORKFLOWS_PATH } from '../src/workflow-code';
import { printTargets, runAlone, summarize, type BenchServer, type Row, type Target } from './lib';

const run = promisify(execFile);

const DEFAULT_BIN = fileURLToPath(new URL('../bin/agent-judge.mjs', import.meta.url));
const BUILD_SCRIPT = fileURLToPath(new URL('../scripts/build.mjs', import.meta.url));

const HELP = 'agent-judge --help';
const STATUS = 'agent-judge status <id>';
const LIST = 'agent-judge list';

/**
 * The bounds on the medians: `--help` under 0.25 s (issue 12), `status` and `list` under 0.3 s (issue 43; one row each
 * per CLI timed).
 */
export function cliTargets(rows: readonly Row[]): Target[] {
  return rows.flatMap((row): Target[] => {
    const limit = row.name.startsWith(HELP)
      ? 250
      : row.name.startsWith(STATUS) || row.name.startsWith(LIST)
        ? 300
        : undefined;
    if (limit === undefined || row.p50 === undefined) return [];
    return [{ name: `${row.name}, median`, value: row.p50, limit, kind: 'max', unit: ' ms' }];
  });
}

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
  server: BenchServer,
  bins: readonly string[] = process.env.AGENT_JUDGE_BIN?.split(',') ?? [DEFAULT_BIN],
  runs = Number(process.env.BENCH_CLI_RUNS ?? 20),
): Promise<Row[]> {
  if (bins.includes(DEFAULT_BIN)) {
    execFileSync(process.execPath, [BUILD_SCRIPT, '--if-stale'], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
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
      ...(await timeCommand(HELP, bins, ['--help'], runs)),
      ...(await timeCommand(STATUS, bins, ['status', started.proposal_id, ...target], runs)),
      ...(await timeCommand(LIST, bins, ['list', ...target], runs)),
    ];
  } finally {
    await system.stop();
    rmSync(baseDir, { recursive: true, force: true });
  }
}

const silentBundler = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await runAlone('CLI start-up, wall time of a new process', benchCli, (rows) =>
    printTargets('Issue 12 targets: CLI (median)', cliTargets(rows)),
  );
}
