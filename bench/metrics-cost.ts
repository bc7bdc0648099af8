/**
 * What the live metrics cost a decision (issue 11: "the metrics add less than 2 % to decision latency").
 *
 * Two `agent-judge worker` processes run side by side against the same dev server, each on its own task queues: one
 * with `--metrics` (the SDK's Prometheus exporter, our counters and histograms, the visibility gauges), one with
 * `--metrics off`. The same proposals go to both, one at a time, alternating which arm goes first, so load on the
 * shared machine falls on both alike. Reported: latency of each arm, the ratio on/off, and each worker process's CPU
 * per proposal (read from /proc, steadier than wall time on a busy machine).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { parse as parseYaml } from 'yaml';
import { submitAndWait } from '../src/client/proposals';
import { freePort } from '../src/devserver/server';
import { generateCapabilityKey } from '../src/identity/capability-key';
import { taskQueuesFor } from '../src/names';
import { DEFAULT_POLICY_PATH } from '../src/policy/load';
import { percentileOf, processCpuMs, summarize, timed, type BenchServer, type Row } from './lib';

const N = Number(process.env.BENCH_METRICS_N ?? 200);
const WARM_UP = 10;
const BIN = fileURLToPath(new URL('../bin/agent-judge.mjs', import.meta.url));

type Arm = 'on' | 'off';
type Kind = 'lightweight' | 'no-judge';

function proposalOf(kind: Kind): Record<string, unknown> {
  const id = randomUUID();
  const shape =
    kind === 'lightweight'
      ? {
          action_type: 'vault_note_create',
          target: { vault: 'main', path: `notes/m-${id}.md` },
          parameters: { content: '# m' },
        }
      : { action_type: 'memory_write', target: { store: 'bench' }, parameters: { content: `m ${id}` } };
  return {
    proposal_id: id,
    agent_id: '@bench',
    justification: `metrics cost ${id}`,
    cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/11' }],
    ...shape,
  };
}

const EXPECTED: Record<Kind, string> = { lightweight: 'approved', 'no-judge': 'executed' };

interface WorkerProcess {
  child: ChildProcess;
  taskQueue: string;
  stderr: string[];
  /** Rejects when the process ends: a worker that died must fail the bench, not hang it. */
  exited: Promise<never>;
}

async function startWorker(server: BenchServer, dir: string, arm: Arm): Promise<WorkerProcess> {
  const key = generateCapabilityKey(`bench-${arm}`);
  const policy = parseYaml(readFileSync(DEFAULT_POLICY_PATH, 'utf8')) as { spec: Record<string, unknown> };
  policy.spec.capabilities = { ...(policy.spec.capabilities as object), issuers: { [key.kid]: key.public_key } };
  const policyFile = join(dir, `policy-${arm}.json`);
  writeFileSync(policyFile, JSON.stringify(policy));
  const prefix = `metrics-${arm}-${randomUUID().slice(0, 8)}`;
  // BENCH_METRICS_CONTROL=1 runs both arms without metrics: an A/A control that shows how far two identical
  // worker processes differ on this machine, the noise floor the on/off ratio must be read against.
  const on = arm === 'on' && process.env.BENCH_METRICS_CONTROL !== '1';
  const metrics = on ? `127.0.0.1:${await freePort()}` : 'off';
  const child = spawn(
    process.execPath,
    [
      BIN,
      'worker',
      '--role',
      'workflow,judge,executor',
      '--policy',
      policyFile,
      '--task-queue-prefix',
      prefix,
      '--metrics',
      metrics,
    ],
    {
      cwd: dir,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: server.address,
        TEMPORAL_NAMESPACE: server.namespace,
        AGENT_JUDGE_CAPABILITY_KEY: `${key.kid}:${key.private_key}`,
        LOG_FORMAT: 'json',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  child.stdio[2]?.setEncoding('utf8');
  const stderr: string[] = [];
  child.stdio[2]?.on('data', (d: string) => stderr.push(d));
  const exited = new Promise<never>((_, reject) =>
    child.on('exit', (code, signal) =>
      reject(new Error(`worker (${arm}) ended: code ${code}, signal ${signal}: ${stderr.join('').slice(-2000)}`)),
    ),
  );
  exited.catch(() => undefined);
  return { child, taskQueue: taskQueuesFor(prefix).workflow, stderr, exited };
}

export async function benchMetricsCost(server: BenchServer): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-judge-metrics-cost-'));
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });
  const workers = {} as Record<Arm, WorkerProcess>;
  try {
    for (const arm of ['on', 'off'] as const) workers[arm] = await startWorker(server, dir, arm);
    const once = async (arm: Arm, kind: Kind): Promise<number> => {
      const [ms, out] = await timed(() =>
        Promise.race([
          submitAndWait(client, proposalOf(kind), { taskQueue: workers[arm].taskQueue }),
          workers[arm].exited,
        ]),
      );
      if (out.status !== EXPECTED[kind]) throw new Error(`metrics ${arm} ${kind}: got ${out.status}`);
      return ms;
    };
    // Warm-up, also the readiness wait: the first proposal waits until the worker polls.
    for (const arm of ['on', 'off'] as const) {
      for (let i = 0; i < WARM_UP; i++) for (const kind of ['lightweight', 'no-judge'] as const) await once(arm, kind);
    }
    const samples: Record<`${Arm} ${Kind}`, number[]> = {
      'on lightweight': [],
      'off lightweight': [],
      'on no-judge': [],
      'off no-judge': [],
    };
    const cpuStart = { on: processCpuMs(workers.on.child.pid), off: processCpuMs(workers.off.child.pid) };
    for (let i = 0; i < N; i++) {
      const arms: Arm[] = i % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
      for (const kind of ['lightweight', 'no-judge'] as const)
        for (const arm of arms) samples[`${arm} ${kind}`].push(await once(arm, kind));
    }
    const cpuPerOp = (arm: Arm) => (processCpuMs(workers[arm].child.pid) - cpuStart[arm]) / (2 * N);
    const p = percentileOf;
    const rows: Row[] = [];
    for (const kind of ['lightweight', 'no-judge'] as const) {
      const on = samples[`on ${kind}`];
      const off = samples[`off ${kind}`];
      rows.push(summarize(`${kind}, worker with --metrics off`, off));
      rows.push(
        summarize(
          process.env.BENCH_METRICS_CONTROL === '1'
            ? `${kind}, second worker, --metrics off too (A/A control)`
            : `${kind}, worker with --metrics (exporter, counters, gauges)`,
          on,
          `on/off p50 ${(p(on, 50) / p(off, 50)).toFixed(3)}x, p95 ${(p(on, 95) / p(off, 95)).toFixed(3)}x ` +
            '(target < 1.02x)',
        ),
      );
    }
    const cpuOn = cpuPerOp('on');
    const cpuOff = cpuPerOp('off');
    rows.push({
      name: 'worker process CPU per proposal (both kinds), ms',
      n: 2 * N,
      note: `on ${cpuOn.toFixed(2)}, off ${cpuOff.toFixed(2)}: ${(cpuOn / cpuOff).toFixed(3)}x`,
    });
    return rows;
  } finally {
    for (const w of Object.values(workers)) {
      w.child.removeAllListeners('exit');
      w.child.kill('SIGTERM');
    }
    await connection.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
