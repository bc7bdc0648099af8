/**
 * Failover on the real multi-process cluster (scripts/cluster.sh; run by `npm run test:cluster`, never by `npm test`:
 * it kills the cluster's own processes). With proposals in flight (executions running, escalations waiting for a
 * person, lightweight writes), one history host is killed with SIGKILL and its peer takes its shards; then the
 * frontend the worker talks to is killed and started again. Each time: nothing lost, nothing run twice, every proposal
 * final. Printed: seconds from the kill (the restart) until the last action was final, and how late after its own
 * deadline the last escalation ended (docs/deploy.md has the table).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { submitProposal } from '../../src/client/proposals';
import type { ProposalOutcome } from '../../src/contracts/status';
import { proposal, testPolicy } from '../helpers/system';
import {
  counts,
  expectNoneLostNoneTwice,
  faultSpec,
  finalOutcomes,
  killHard,
  lines,
  memoryLines,
  startWorkerProcess,
  submitMix,
  until,
  writePolicy,
  type WorkerProcess,
} from '../faults/lib';

/** The second frontend of scripts/cluster.sh; the test's client uses the first (the run's address). */
const WORKER_FRONTEND = '127.0.0.1:17333';
const CLUSTER = fileURLToPath(new URL('../../scripts/cluster.sh', import.meta.url));
const ESCALATION_TIMEOUT_S = 25;

interface FailoverRow {
  killed: string;
  inFlight: number;
  lost: number;
  twice: number;
  /** From the kill (or the restart) until the last execution and write was final. */
  actionsFinalS: number;
  /** How long after its own deadline the last escalation ended (its timer fired on whichever host held it). */
  escalationsLateS: number;
  /** Final statuses, counted: what to read first when a row shows something lost. */
  statuses: Record<string, number>;
}
const rows: FailoverRow[] = [];

let dir: string;
let connection: Connection;
let client: Client;
let worker: WorkerProcess;
let policy: ReturnType<typeof testPolicy>;
let prefix: string;

const cluster = (...args: string[]) => execFileSync('bash', [CLUSTER, ...args], { encoding: 'utf8' });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agent-judge-failover-'));
  policy = testPolicy(dir, {
    // The policy's default heartbeat timeout: an outage longer than it ends a running execution as `uncertain`
    // (the server can no longer tell a cut-off executor from a dead one; it never runs it again).
    ...faultSpec('10s'),
    escalation: { timeout: `${ESCALATION_TIMEOUT_S}s`, approvers: ['scott'], reminderAt: 0 },
  });
  prefix = `failover-${randomUUID().slice(0, 8)}`;
  worker = startWorkerProcess({
    roles: 'workflow,judge,executor',
    policyFile: writePolicy(dir, policy),
    prefix,
    cwd: dir,
    address: WORKER_FRONTEND,
    namespace: inject('temporalNamespace'),
  });
  await worker.ready;
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: inject('temporalNamespace') });
}, 180_000);

afterAll(async () => {
  if (worker) await killHard(worker.child);
  await connection?.close().catch(() => {});
  if (rows.length > 0) {
    console.log('failover | in flight | lost | twice | s to actions final | s escalations late');
    for (const r of rows)
      console.log(`${r.killed} | ${r.inFlight} | ${r.lost} | ${r.twice} | ${r.actionsFinalS} | ${r.escalationsLateS}`);
    writeFileSync(join(process.cwd(), '.agent-judge', 'failover-results.json'), JSON.stringify(rows, null, 2));
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Proposals in flight: slow execs (one running before the kill), lightweight writes, escalations waiting. */
async function inFlight(tag: string) {
  const trace = join(dir, `trace-${tag}`);
  mkdirSync(trace);
  const mix = await submitMix(client, prefix, { trace, execs: 3, memories: 6, seconds: 4 });
  const escalations = await Promise.all(
    Array.from(
      { length: 3 },
      async () => (await submitProposal(client, proposal('financial_op'), { taskQueue: prefix })).workflow_id,
    ),
  );
  const deadline = Date.now() + ESCALATION_TIMEOUT_S * 1000;
  await until(() => lines(join(trace, 'exec-started.log')).length >= 1, 'an exec started');
  return { mix, escalations, deadline, actions: [...mix.execs, ...mix.memories] };
}

/** Waits for the actions, then the escalations, noting when each group was final. */
async function settle(flight: Awaited<ReturnType<typeof inFlight>>, since: number) {
  const outcomes = await finalOutcomes(client, flight.actions, 240_000);
  const actionsFinalS = (Date.now() - since) / 1000;
  for (const [id, out] of await finalOutcomes(client, flight.escalations, 240_000)) outcomes.set(id, out);
  const escalationsLateS = (Date.now() - flight.deadline) / 1000;
  return { outcomes, actionsFinalS, escalationsLateS };
}

/** Every escalation ended by its own deadline (a durable timer that moved with its shard), never decided twice. */
function expectEscalationsExpired(ids: string[], outcomes: Map<string, ProposalOutcome>): void {
  for (const id of ids)
    expect(outcomes.get(id), id).toMatchObject({
      status: 'rejected',
      verdict: { verdict: 'REJECT', decided_by: 'timeout' },
    });
}

/** The table row, counted from the traces the actions left (before the assertions, so a failure is counted too). */
function record(
  killed: string,
  flight: Awaited<ReturnType<typeof inFlight>>,
  settled: Awaited<ReturnType<typeof settle>>,
): void {
  const { mix } = flight;
  const starts = counts(join(mix.trace, 'exec-started.log'));
  const written = memoryLines(policy.spec.memory.dir, mix.store);
  const performed = [
    ...mix.tags.map((tag) => starts.get(`start ${tag}`) ?? 0),
    ...mix.memories.map((id) => written.get(id) ?? 0),
  ];
  const all = [...flight.actions, ...flight.escalations];
  const round = (s: number) => Math.round(s * 10) / 10;
  rows.push({
    killed,
    inFlight: all.length,
    lost: all.filter((id) => !settled.outcomes.has(id)).length + performed.filter((n) => n === 0).length,
    twice: performed.filter((n) => n > 1).length,
    actionsFinalS: round(settled.actionsFinalS),
    escalationsLateS: round(settled.escalationsLateS),
    statuses: [...settled.outcomes.values()].reduce<Record<string, number>>(
      (acc, out) => ({ ...acc, [out.status]: (acc[out.status] ?? 0) + 1 }),
      {},
    ),
  });
}

describe('the cluster loses a process with proposals in flight', () => {
  it('a history host killed (-9): its peer takes the shards; nothing lost, nothing run twice', async () => {
    const flight = await inFlight('history');
    cluster('stop', 'history1');
    try {
      const settled = await settle(flight, Date.now());
      record('history host killed (peer takes over)', flight, settled);
      expectNoneLostNoneTwice(flight.mix, settled.outcomes, policy.spec.memory.dir, 'executed');
      expectEscalationsExpired(flight.escalations, settled.outcomes);
    } finally {
      cluster('start', 'history1');
    }
  }, 300_000);

  it("the worker's frontend killed (-9) and started again: every proposal ends; nothing runs twice", async () => {
    const flight = await inFlight('frontend');
    const killedAt = Date.now();
    cluster('stop', 'frontend2');
    cluster('start', 'frontend2');
    const downS = Math.round((Date.now() - killedAt) / 100) / 10;
    const settled = await settle(flight, Date.now());
    record(`worker's frontend killed, listening again after ${downS} s`, flight, settled);
    expectNoneLostNoneTwice(flight.mix, settled.outcomes, policy.spec.memory.dir, 'executed');
    expectEscalationsExpired(flight.escalations, settled.outcomes);
  }, 300_000);
});
