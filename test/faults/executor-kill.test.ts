/**
 * Issue 9 §1: the executor worker (`agent-judge worker --role executor`, a real process) is killed
 * with SIGKILL while approved actions run. Proposals must end within seconds of its restart, each
 * in a defined state: memory writes executed exactly once; an exec that may have run is never run
 * again and ends `uncertain`, announced to people. Before heartbeats they stayed pending for 1 h.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, inject } from 'vitest';
import { submitProposal } from '../../src/client/proposals';
import type { UncertainExecutionNotice } from '../../src/contracts/escalation';
import { UNCERTAIN_EXPLANATION } from '../../src/contracts/lifecycle';
import type { EscalationNotifier } from '../../src/escalation/notifier';
import { proposal, startSystem, type TestSystem } from '../helpers/system';
import {
  counts,
  faultSpec,
  finalOutcomes,
  killHard,
  lines,
  memoryLines,
  slowExec,
  startWorkerProcess,
  until,
  writePolicy,
  type WorkerProcess,
} from './lib';

const told: UncertainExecutionNotice[] = [];
const recorder: EscalationNotifier = {
  name: 'recorder',
  announce: () => Promise.resolve([]),
  remind: () => Promise.resolve(),
  resolve: () => Promise.resolve(),
  uncertain: (n) => {
    told.push(n);
    return Promise.resolve();
  },
};

let sys: TestSystem;
let policyFile: string;
const started: WorkerProcess[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  // The workflow and judge workers run in this process; only the executor is a separate process.
  sys = await startSystem({ roles: ['workflow', 'judge'], spec: faultSpec('2s'), notifiers: [recorder] });
  policyFile = writePolicy(sys.baseDir, sys.policy);
});
afterEach(async () => {
  for (const w of started.splice(0)) await killHard(w.child);
});
afterAll(async () => {
  await sys?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function executor(cwd: string): WorkerProcess {
  const w = startWorkerProcess({
    roles: 'executor',
    policyFile,
    prefix: sys.taskQueues.workflow,
    cwd,
    address: inject('temporalAddress'),
    namespace: inject('temporalNamespace'),
  });
  started.push(w);
  return w;
}

async function submit(p: Record<string, unknown>): Promise<string> {
  return (await submitProposal(sys.client, p, { taskQueue: sys.taskQueues.workflow })).workflow_id;
}

async function scenario(restartIn: (first: string) => string) {
  const trace = mkdtempSync(join(tmpdir(), 'agent-judge-fault-trace-'));
  dirs.push(trace);
  const store = `engineering.fault-${randomUUID().slice(0, 8)}`;
  const first = executor(sys.baseDir);
  await first.ready;

  const tags = [0, 1, 2].map(() => randomUUID().slice(0, 8));
  const execs = await Promise.all(
    tags.map((tag) => submit(proposal('exec', { parameters: { command: slowExec(trace, tag, 6) } }))),
  );
  const memoryBefore = await Promise.all(
    [0, 1, 2].map((n) =>
      submit(proposal('memory_write', { target: { store }, parameters: { content: `before ${n}` } })),
    ),
  );
  // Every exec's process is running: kill the executor mid-action.
  const startedLog = join(trace, 'exec-started.log');
  await until(() => lines(startedLog).length === tags.length, 'every exec started');
  await killHard(first.child);
  // More work arrives while no executor runs: it must wait, not be lost.
  const memoryDuring = await Promise.all(
    [0, 1, 2].map((n) =>
      submit(proposal('memory_write', { target: { store }, parameters: { content: `during ${n}` } })),
    ),
  );
  const second = executor(restartIn(sys.baseDir));
  await second.ready;
  const outcomes = await finalOutcomes(sys.client, [...execs, ...memoryBefore, ...memoryDuring]);

  // Nothing ran twice: each exec started once, each memory write left one line.
  const starts = counts(startedLog);
  for (const tag of tags) expect(starts.get(`start ${tag}`), `exec ${tag} starts`).toBe(1);
  const mem = memoryLines(sys.policy.spec.memory.dir, store);
  for (const id of [...memoryBefore, ...memoryDuring]) {
    expect(mem.get(id), `memory lines of ${id}`).toBe(1);
    expect(outcomes.get(id)).toMatchObject({ status: 'executed', execution: { status: 'succeeded' } });
  }
  // Nothing lost or guessed: each exec ends uncertain, says what to check, and people were told.
  for (const id of execs) {
    const out = outcomes.get(id)!;
    expect(out.status, `${id}: ${JSON.stringify(out.execution)}`).toBe('uncertain');
    expect(out.execution).toMatchObject({ status: 'uncertain', executor: 'exec' });
    expect(out.execution?.error).toContain(UNCERTAIN_EXPLANATION);
    expect(told.filter((n) => n.workflow_id === id)).toHaveLength(1);
  }
  return { outcomes, execs, trace };
}

describe('executor killed mid-action', () => {
  it('restarted on the same host: its ledger knows the execs started; nothing hangs or runs twice', async () => {
    const { outcomes, execs } = await scenario((same) => same);
    for (const id of execs) {
      expect(outcomes.get(id)?.execution?.error).toContain('an earlier attempt on this host started this action');
    }
  }, 240_000);

  it('retried on another host (no shared ledger): attempt number and heartbeat stop a second run', async () => {
    const other = mkdtempSync(join(tmpdir(), 'agent-judge-other-host-'));
    dirs.push(other);
    const { outcomes, execs } = await scenario(() => other);
    for (const id of execs) {
      // The first attempt's heartbeat crossed hosts: the retry names where it ran (and its pid when
      // the heartbeat after the process start got out before the kill).
      const error = outcomes.get(id)?.execution?.error ?? '';
      expect(error).toContain(`attempt 1 on ${hostname()}:${join(sys.baseDir, '.agent-judge', 'executions')}`);
      expect(error).toMatch(/ (started this action \(pid \d+\)|may have started this action) /);
    }
  }, 240_000);
});
