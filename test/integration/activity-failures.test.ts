/**
 * The activity boundary maps our error family to the failure types workflow code expects, through
 * a real worker on the real dev server: the type the workflow sees, and how many attempts ran (one
 * for a failure no retry can fix, the retry limit for one that might heal).
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { testRuntimeLogger } from '../helpers/runtime-logger';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { activityInterceptors } from '../../src/activities/failures';
import { createWorkflowActivities } from '../../src/activities/workflow';
import { CircleRefusedError } from '../../src/circles/errors';
import {
  AgentJudgeError,
  BadInputError,
  ExecutionRefusedError,
  NotFoundError,
  PolicyError,
} from '../../src/contracts/errors';
import { FailureType } from '../../src/contracts/lifecycle';
import type { EscalationNotifier } from '../../src/escalation/notifier';
import { DiscordDeliveryError } from '../../src/escalation/discord-notifier';
import { taskQueuesFor } from '../../src/names';
import { createWorkers } from '../../src/worker';
import type { FailureProbeResult } from '../helpers/failure-probe-workflow';
import { sampleNotice } from '../helpers/escalation-notice';
import { judgePolicy, tempBaseDir } from '../helpers/judge-fixtures';

try {
  Runtime.install({ logger: testRuntimeLogger('ERROR') });
} catch {
  /* already installed in this process */
}

const address = inject('temporalAddress');
const namespace = inject('temporalNamespace');
const prefix = `failures-${randomUUID().slice(0, 8)}`;
const activityQueue = `${prefix}-activities`;
const probeQueue = `${prefix}-probe`;
const taskQueues = taskQueuesFor(prefix);

const attempts = new Map<string, number>();
/** A test activity that counts its attempts and always throws what `make` builds. */
const throwing = (name: string, make: () => Error) => (): Promise<never> => {
  attempts.set(name, (attempts.get(name) ?? 0) + 1);
  return Promise.reject(make());
};

/** A notifier whose every call fails with `make()`. */
const failingNotifier = (name: string, make: () => Error): EscalationNotifier => ({
  name,
  announce: () => Promise.reject(make()),
  remind: () => Promise.reject(make()),
  resolve: () => Promise.reject(make()),
});

let native: NativeConnection;
let connection: Connection;
let client: Client;
let workers: Worker[] = [];
let running: Array<Promise<void>> = [];

beforeAll(async () => {
  native = await NativeConnection.connect({ address });
  connection = await Connection.connect({ address });
  client = new Client({ connection, namespace });
  const baseDir = tempBaseDir();
  const policy = await judgePolicy(baseDir);
  const logger = pino({ level: 'silent' });
  const announceWith = (notifier: EscalationNotifier) => {
    const activities = createWorkflowActivities({
      policy,
      taskQueues,
      executable: [],
      notifiers: [notifier],
      client,
      logger,
    });
    return (notice: Parameters<typeof activities.announceEscalation>[0]) => activities.announceEscalation(notice);
  };
  const permanentDiscord = announceWith(
    failingNotifier('discord', () => new DiscordDeliveryError('Discord refused every escalation message: 50007')),
  );
  const flakyDiscord = announceWith(failingNotifier('discord', () => new Error('socket hang up')));
  const counted =
    <A>(name: string, fn: (a: A) => Promise<unknown>) =>
    (a: A) => {
      attempts.set(name, (attempts.get(name) ?? 0) + 1);
      return fn(a);
    };
  const activities = {
    badInput: throwing('badInput', () => new BadInputError('proposal.target: expected an object')),
    policy: throwing('policy', () => new PolicyError('policy: spec.riskMatrix: expected an array')),
    executionRefused: throwing('executionRefused', () => new ExecutionRefusedError('cwd is outside the roots')),
    circleRefused: throwing(
      'circleRefused',
      () => new CircleRefusedError('agent x is not registered', 'unknown-agent'),
    ),
    notFound: throwing('notFound', () => new NotFoundError('no proposal p')),
    internal: throwing('internal', () => new AgentJudgeError('broken invariant')),
    plain: throwing('plain', () => new TypeError('cannot read properties of undefined')),
    permanentDiscord: counted('permanentDiscord', permanentDiscord),
    flakyDiscord: counted('flakyDiscord', flakyDiscord),
  };
  const testWorker = await Worker.create({
    connection: native,
    namespace,
    taskQueue: activityQueue,
    activities,
    interceptors: { activity: activityInterceptors },
  });
  // The judge worker exactly as the product creates it (createWorkers registers the mapping).
  const judgeWorkers = await createWorkers({
    connection: native,
    namespace,
    taskQueues,
    policy,
    roles: ['judge'],
    logger,
    baseDir,
  });
  const probe = await Worker.create({
    connection: native,
    namespace,
    taskQueue: probeQueue,
    workflowsPath: fileURLToPath(new URL('../helpers/failure-probe-workflow.ts', import.meta.url)),
  });
  workers = [testWorker, ...judgeWorkers, probe];
  running = workers.map((w) => w.run());
});

afterAll(async () => {
  for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  await Promise.allSettled(running);
  await native?.close();
  await connection?.close();
});

const probe = (activity: string, input: unknown = {}, queue = activityQueue) =>
  client.workflow.execute('probeFailure', {
    taskQueue: probeQueue,
    workflowId: `probe-${activity}-${randomUUID()}`,
    args: [queue, activity, input],
    workflowExecutionTimeout: '120s',
  }) as Promise<FailureProbeResult>;

describe('errors become the failure types the workflow expects', () => {
  it.each([
    ['badInput', FailureType.BadInput],
    ['policy', FailureType.BadPolicy],
    ['executionRefused', FailureType.ExecutionRefused],
    ['circleRefused', FailureType.CircleRefused],
  ])('%s: type %s, non-retryable, one attempt', async (activity, type) => {
    const r = await probe(activity);
    expect(r).toMatchObject({ ok: false, type, nonRetryable: true, retryState: 'NON_RETRYABLE_FAILURE' });
    expect(attempts.get(activity)).toBe(1);
  });

  it.each([
    ['notFound', FailureType.NotFound],
    ['internal', FailureType.Internal],
  ])('%s: type %s, retried up to the limit', async (activity, type) => {
    const r = await probe(activity);
    expect(r).toMatchObject({ ok: false, type, nonRetryable: false, retryState: 'MAXIMUM_ATTEMPTS_REACHED' });
    expect(attempts.get(activity)).toBe(3);
  });

  it('an error outside the family keeps its name and is retried', async () => {
    const r = await probe('plain');
    expect(r).toMatchObject({ ok: false, type: 'TypeError', nonRetryable: false });
    expect(attempts.get('plain')).toBe(3);
  });

  it('a Discord delivery refused for good is DeliveryRefused and tried once', async () => {
    const r = await probe('permanentDiscord', sampleNotice());
    expect(r).toMatchObject({ ok: false, type: FailureType.DeliveryRefused, nonRetryable: true });
    expect(r.message).toMatch(/^announce failed: discord: DiscordDeliveryError: Discord refused every escalation/);
    expect(attempts.get('permanentDiscord')).toBe(1);
  });

  it('a Discord delivery that may heal is retried', async () => {
    const r = await probe('flakyDiscord', sampleNotice());
    expect(r).toMatchObject({ ok: false, nonRetryable: false, retryState: 'MAXIMUM_ATTEMPTS_REACHED' });
    expect(attempts.get('flakyDiscord')).toBe(3);
  });

  it('the judge worker createWorkers builds refuses a malformed proposal as BadInput, once', async () => {
    const r = await probe(
      'judge',
      { proposal: { proposal_id: 'x' }, tier: 'full-judge-review', round: 0 },
      taskQueues.judge,
    );
    expect(r).toMatchObject({
      ok: false,
      type: FailureType.BadInput,
      nonRetryable: true,
      retryState: 'NON_RETRYABLE_FAILURE',
    });
  });
});
