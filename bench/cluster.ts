/**
 * `npm run bench:cluster`: scale figures on the real multi-process cluster (scripts/cluster.sh, brought up and down
 * here). Proposals per second and latency (submit -> final outcome, one Update-with-Start call as `propose --wait`) at
 * a fixed concurrency, for 1, 2 and 4 workflow-worker processes with two history hosts, and 2 workers with one; each
 * configuration measured BENCH_CLUSTER_ROUNDS times (default 3), interleaved, and reported as the median round. CPU
 * per proposal is split by process kind (agent-judge workers, each Temporal service, PostgreSQL) to show where the
 * time goes.
 *
 * Sizes: BENCH_CLUSTER_N proposals per round (default 300) at BENCH_CLUSTER_CONCURRENCY in flight (default 32).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { submitAndWait } from '../src/client/proposals';
import { freshNamespace } from '../test/existing-server';
import { faultSpec, killHard, startWorkerProcess, writePolicy, type WorkerProcess } from '../test/faults/lib';
import { proposal, testPolicy } from '../test/helpers/system';
import { percentileOf, pool, printColumns, processCpuMs } from './lib';

const N = Number(process.env.BENCH_CLUSTER_N ?? 300);
const CONCURRENCY = Number(process.env.BENCH_CLUSTER_CONCURRENCY ?? 32);
const ROUNDS = Number(process.env.BENCH_CLUSTER_ROUNDS ?? 3);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STATE = join(ROOT, '.agent-judge', 'cluster');
const FRONTEND = '127.0.0.1:17233';
const cluster = (...args: string[]) =>
  execFileSync('bash', [join(ROOT, 'scripts', 'cluster.sh'), ...args], { encoding: 'utf8', stdio: 'pipe' });

interface Config {
  workers: 1 | 2 | 4;
  historyHosts: 1 | 2;
}
const CONFIGS: Config[] = [
  { workers: 1, historyHosts: 2 },
  { workers: 2, historyHosts: 2 },
  { workers: 4, historyHosts: 2 },
  { workers: 2, historyHosts: 1 },
];

interface Round {
  opsPerSecond: number;
  p50: number;
  p95: number;
  /** CPU ms per proposal by process kind. */
  cpu: Record<string, number>;
}

/** CPU so far of every process of a kind: the cluster's services from their pid files, PostgreSQL by name. */
function cpuByKind(workerPids: number[]): Record<string, number> {
  const sum = (pids: number[]) => pids.reduce((total, pid) => total + (processCpuMs(pid) || 0), 0);
  const pidOf = (name: string) => {
    try {
      return [Number(readFileSync(join(STATE, `${name}.pid`), 'utf8'))];
    } catch {
      return [];
    }
  };
  const postgres = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
      } catch {
        return false;
      }
    })
    .map(Number);
  return {
    'agent-judge workers': sum(workerPids),
    'temporal frontends': sum([...pidOf('frontend1'), ...pidOf('frontend2')]),
    'temporal history': sum([...pidOf('history1'), ...pidOf('history2')]),
    'temporal matching': sum(pidOf('matching')),
    postgresql: sum(postgres),
  };
}

async function main(): Promise<void> {
  console.log(cluster('up'));
  const dir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-cluster-'));
  const namespace = await freshNamespace(FRONTEND, (line) => console.log(line));
  const connection = await Connection.connect({ address: FRONTEND });
  const client = new Client({ connection, namespace });
  const policy = testPolicy(dir, faultSpec('5s'));
  const policyFile = writePolicy(dir, policy);
  const results = new Map<Config, Round[]>(CONFIGS.map((c) => [c, []]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Interleaved: each round visits every configuration, so drift on a shared machine spreads over all of them.
      for (const config of CONFIGS) {
        if (config.historyHosts === 1) cluster('stop', 'history2');
        const prefix = `bench-cluster-${randomUUID().slice(0, 8)}`;
        const start = (roles: string) =>
          startWorkerProcess({ roles, policyFile, prefix, cwd: dir, address: FRONTEND, namespace });
        const workers: WorkerProcess[] = [start('judge,executor')];
        for (let i = 0; i < config.workers; i++) workers.push(start('workflow'));
        try {
          await Promise.all(workers.map((w) => w.ready));
          const once = async () => {
            const out = await submitAndWait(client, proposal('vault_note_create'), { taskQueue: prefix });
            if (out.status !== 'approved') throw new Error(`bench cluster: expected approved, got ${out.status}`);
          };
          await pool(Array.from({ length: CONCURRENCY * 2 }), CONCURRENCY, once); // warm-up
          const pids = workers.map((w) => w.child.pid ?? -1);
          const cpu0 = cpuByKind(pids);
          const latencies: number[] = [];
          const t0 = performance.now();
          await pool(Array.from({ length: N }), CONCURRENCY, async () => {
            const s = performance.now();
            await once();
            latencies.push(performance.now() - s);
          });
          const wallMs = performance.now() - t0;
          const cpu1 = cpuByKind(pids);
          results.get(config)!.push({
            opsPerSecond: (N * 1000) / wallMs,
            p50: percentileOf(latencies, 50),
            p95: percentileOf(latencies, 95),
            cpu: Object.fromEntries(Object.keys(cpu1).map((k) => [k, (cpu1[k]! - cpu0[k]!) / N])),
          });
          console.log(
            `round ${round + 1}/${ROUNDS}: ${config.workers} workflow worker(s), ${config.historyHosts} history ` +
              `host(s): ${((N * 1000) / wallMs).toFixed(1)} proposals/s`,
          );
        } finally {
          await Promise.all(workers.map((w) => killHard(w.child)));
          if (config.historyHosts === 1) cluster('start', 'history2');
        }
      }
    }
  } finally {
    await connection.close();
    console.log(cluster('down'));
    rmSync(dir, { recursive: true, force: true });
  }

  const median = (xs: number[]) => percentileOf(xs, 50);
  const kinds = Object.keys(results.get(CONFIGS[0]!)![0]!.cpu);
  printColumns(
    `Cluster scale: lightweight proposals (vault note, approved), submit -> final outcome, ${CONCURRENCY} in flight, ` +
      `${N} per round; median of ${ROUNDS} interleaved rounds (range in brackets); CPU ms per proposal by process`,
    ['workflow workers', 'history hosts', 'proposals/s', 'p50 ms', 'p95 ms', ...kinds],
    CONFIGS.map((config) => {
      const rounds = results.get(config)!;
      const ops = rounds.map((r) => r.opsPerSecond);
      return [
        String(config.workers),
        String(config.historyHosts),
        `${median(ops).toFixed(1)} [${Math.min(...ops).toFixed(1)}-${Math.max(...ops).toFixed(1)}]`,
        median(rounds.map((r) => r.p50)).toFixed(0),
        median(rounds.map((r) => r.p95)).toFixed(0),
        ...kinds.map((k) => median(rounds.map((r) => r.cpu[k]!)).toFixed(1)),
      ];
    }),
  );
}

await main();
