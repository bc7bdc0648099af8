/**
 * The workflow worker (`agent-judge worker --role workflow,judge`, a real process) is killed with
 * SIGKILL while proposals are being judged and executed, then restarted: Temporal replays their
 * histories on the new process. Every proposal ends; no exec or memory write runs twice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it, inject } from 'vitest';
import { startSystem, type TestSystem } from '../helpers/system';
import {
  expectNoneLostNoneTwice,
  faultSpec,
  finalOutcomes,
  killHard,
  lines,
  startWorkerProcess,
  submitMix,
  until,
  writePolicy,
  type WorkerProcess,
} from './lib';

let sys: TestSystem;
let trace: string;
const started: WorkerProcess[] = [];

beforeAll(async () => {
  // The executor runs in this process; the workflow and judge workers are the process killed.
  sys = await startSystem({ roles: ['executor'], spec: faultSpec('5s') });
  trace = mkdtempSync(join(tmpdir(), 'agent-judge-fault-trace-'));
});
afterAll(async () => {
  for (const w of started) await killHard(w.child);
  await sys?.stop();
  rmSync(trace, { recursive: true, force: true });
});

function workflowWorker(): WorkerProcess {
  const w = startWorkerProcess({
    roles: 'workflow,judge',
    policyFile: writePolicy(sys.baseDir, sys.policy),
    prefix: sys.taskQueues.workflow,
    cwd: sys.baseDir,
    address: inject('temporalAddress'),
    namespace: inject('temporalNamespace'),
  });
  started.push(w);
  return w;
}

describe('workflow worker killed mid-flight', () => {
  it('every proposal ends after the restart; nothing runs twice', async () => {
    const first = workflowWorker();
    await first.ready;
    const mix = await submitMix(sys.client, sys.taskQueues.workflow, { trace, execs: 3, memories: 6, seconds: 3 });
    await until(() => lines(join(trace, 'exec-started.log')).length >= 1, 'an exec started');
    await killHard(first.child);
    const second = workflowWorker();
    await second.ready;
    const outcomes = await finalOutcomes(sys.client, [...mix.execs, ...mix.memories]);
    expectNoneLostNoneTwice(mix, outcomes, sys.policy.spec.memory.dir, 'executed');
  }, 240_000);
});
