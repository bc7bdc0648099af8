import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import type { Logger } from '../contracts/logger';
import { confirmProposalIdReservation } from '../client/proposals';
import { createExecutorActivities, type ExecutorDeps } from '../activities/execute';
import { createJudgeActivities } from '../activities/judge';
import { createWorkflowActivities } from '../activities/workflow';
import { LiveGrants } from '../activities/live-grants';
import { activityInterceptors } from '../activities/failures';
import { createArchiveActivities, type ArchiveDeps } from '../activities/archive';
import type { CompliancePolicy } from '../contracts/policy';
import type { ApproverPasskeys } from '../contracts/passkey';
import { builtinExecutors } from '../executors';
import { createCircleActivities } from '../circles/activities';
import { announceOperatorKeys } from '../client/circles';
import type { EscalationNotifier } from '../escalation/notifier';
import type { JudgeDeps } from '../judge';
import { archiveTaskQueue, REVIEW_WORKFLOW_TYPE, type TaskQueues } from '../names';
import { defaultWorkflowCode } from '../workflow-code';
import { initialiseSeries } from '../metrics/telemetry';
import { startVisibilityGauges, type VisibilityGauges } from '../metrics/gauges';
import { PolicyError } from '../contracts/errors';
import { refusalError } from '../contracts/refusal';
import {
  generateCapabilityKey,
  loadCapabilityKey,
  refuseIssuerKey,
  withCapabilityIssuer,
  type CapabilityKey,
} from '../identity/capability-key';

/**
 * Which workers a process runs. `judge` alone is the judge sidecar of seed 000 §4; `archive` writes the history
 * archive, a folder local to its host, so exactly one process (or several sharing one volume) should run it.
 */
export type WorkerRole = 'workflow' | 'judge' | 'executor' | 'archive';
export const WORKER_ROLES: readonly WorkerRole[] = ['workflow', 'judge', 'executor', 'archive'];

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueues: TaskQueues;
  policy: CompliancePolicy;
  roles?: readonly WorkerRole[];
  /** Needed by the workflow role (audit flag counts through visibility). */
  client?: Client;
  logger: Logger;
  notifiers?: EscalationNotifier[];
  judge?: Partial<JudgeDeps>;
  executor?: Partial<ExecutorDeps>;
  /** Directory relative paths resolve against (default: cwd). */
  baseDir?: string;
  /** Where execution bookkeeping lives (default `<baseDir>/.agent-judge`). */
  stateDir?: string;
  /** A pre-built bundle (tests bundle once per file); else the workflows are bundled at start. */
  workflowBundle?: WorkflowBundleOption;
  /**
   * Action types the executor worker performs; default: the built-in executors plus the policy's
   * webhook routes. Declare custom executors here too when the executor runs in another process.
   */
  executableActionTypes?: string[];
  /**
   * Public keys whose signatures authorise circle registry operator actions (register, retire,
   * allow/revoke pair). Empty: namespace access is the only gate (logged at start).
   */
  circleOperatorKeys?: string[];
  /** The archive role's settings; the folder defaults to the policy's `spec.audit.archive.dir`. */
  archive?: Partial<Pick<ArchiveDeps, 'dir' | 'afterFileWritten'>>;
  /** Workflow cache size of the workflow worker (SDK default when absent; 0 replays every task). */
  maxCachedWorkflows?: number;
  /**
   * The key the workflow worker signs capability tokens with (seed 000 §8); the policy must list it
   * in `spec.capabilities.issuers`. Required by the workflow role: no approval goes out token-less.
   */
  capabilityKey?: CapabilityKey;
  /**
   * The workflow worker's index of live grants (docs/grants.md); by default one of its own, refreshed every
   * `grantRefreshMs` (2 s). Tests pass one to refresh it at once.
   */
  grants?: LiveGrants;
  grantRefreshMs?: number;
  /** The approvers' passkeys (the registry file AGENT_JUDGE_PASSKEYS names), read by the workflow worker. */
  passkeys?: () => ApproverPasskeys;
}

/** Why no workflow worker starts: without a listed key every approved action would be token-less. */
export function requireCapabilityKey(options: Pick<WorkerOptions, 'capabilityKey' | 'policy'>): CapabilityKey {
  const key = options.capabilityKey;
  if (!key)
    throw new PolicyError(
      'the workflow worker needs a capability signing key: set AGENT_JUDGE_CAPABILITY_KEY to a key file or ' +
        '<kid>:<base64url seed> and list its public key in spec.capabilities.issuers (docs/capabilities.md)',
    );
  const refusal = refuseIssuerKey(options.policy, key);
  if (refusal) throw refusalError(refusal, 'AGENT_JUDGE_CAPABILITY_KEY: ', PolicyError);
  return key;
}

/**
 * Creates the workers for the requested roles, each on its own task queue with only its own
 * activities: the judge worker cannot execute, the executor worker cannot judge.
 */
export async function createWorkers(options: WorkerOptions): Promise<Worker[]> {
  const roles = options.roles ?? WORKER_ROLES;
  const baseDir = options.baseDir ?? process.cwd();
  const stateDir = options.stateDir ?? `${baseDir}/.agent-judge`;
  // Every worker maps our error family to failure types at the activity boundary.
  const common = {
    connection: options.connection,
    namespace: options.namespace,
    interceptors: { activity: activityInterceptors },
  };
  const workers: Worker[] = [];

  if (roles.includes('workflow')) {
    if (!options.client) throw new Error('createWorkers: the workflow role needs a Temporal client');
    const capabilityKey = requireCapabilityKey(options);
    const grants =
      options.grants ??
      new LiveGrants({
        client: options.client,
        taskQueue: options.taskQueues.workflow,
        logger: options.logger,
        refreshMs: options.grantRefreshMs,
      });
    const workflowWorker = await Worker.create({
      ...common,
      taskQueue: options.taskQueues.workflow,
      ...(options.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
      ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : defaultWorkflowCode()),
      activities: {
        ...createWorkflowActivities({
          policy: options.policy,
          taskQueues: options.taskQueues,
          executable: options.executableActionTypes ?? [
            ...Object.keys(options.executor?.executors ?? builtinExecutors()),
            ...Object.keys(options.policy.spec.webhook.routes),
          ],
          notifiers: options.notifiers ?? [],
          client: options.client,
          logger: options.logger,
          capabilityKey,
          grants,
          ...(options.passkeys ? { passkeys: options.passkeys } : {}),
        }),
        ...createCircleActivities({ operatorKeys: options.circleOperatorKeys ?? [] }),
      },
    });
    workers.push(workflowWorker);
    // Refreshed while the worker has not stopped (INITIALIZED until its run starts).
    if (!options.grants) grants.start(() => !['STOPPED', 'FAILED'].includes(workflowWorker.getState()));
    // Registries already running read this worker's operator keys now, not at their next run.
    const told = await announceOperatorKeys(options.client, options.taskQueues.workflow).catch((err: unknown) => {
      options.logger.warn({ err: (err as Error).message }, 'could not tell running circle registries to re-read keys');
      return [];
    });
    if (told.length > 0) options.logger.info({ registries: told }, 'circle registries re-read their operator keys');
  }
  if (roles.includes('judge')) {
    workers.push(
      await Worker.create({
        ...common,
        taskQueue: options.taskQueues.judge,
        activities: createJudgeActivities({ baseDir, ...options.judge }),
      }),
    );
  }
  if (roles.includes('executor')) {
    const client = options.client;
    if (!client)
      throw new Error('createWorkers: the executor role needs a Temporal client (to confirm proposal_id reservations)');
    workers.push(
      await Worker.create({
        ...common,
        taskQueue: options.taskQueues.execute,
        activities: createExecutorActivities({
          baseDir,
          stateDir,
          confirmReservation: (proposalId, workflowId) =>
            confirmProposalIdReservation(client, proposalId, workflowId, options.taskQueues.workflow),
          ...options.executor,
        }),
      }),
    );
  }
  if (roles.includes('archive')) {
    if (!options.client) throw new Error('createWorkers: the archive role needs a Temporal client');
    workers.push(
      await Worker.create({
        ...common,
        taskQueue: archiveTaskQueue(options.taskQueues),
        activities: createArchiveActivities({
          client: options.client,
          dir: options.archive?.dir ?? options.policy.spec.audit.archive.dir,
          workflowTaskQueue: options.taskQueues.workflow,
          logger: options.logger,
          afterFileWritten: options.archive?.afterFileWritten,
        }),
      }),
    );
  }
  // Every counter series exists from the start, at zero (see initialiseSeries).
  initialiseSeries(Runtime.instance().metricMeter, {
    namespace: options.namespace,
    taskQueues: options.taskQueues,
    policy: options.policy,
    roles,
    reviewWorkflowType: REVIEW_WORKFLOW_TYPE,
  });
  return workers;
}

/** A fresh capability key held in memory only (tests, benchmarks, scripts). */
function inProcessCapabilityKey(): Promise<CapabilityKey> {
  const file = generateCapabilityKey('in-process');
  return loadCapabilityKey(`${file.kid}:${file.private_key}`);
}

/** Runs workers until `signal` aborts, then shuts them down gracefully. */
export async function runWorkers(workers: Worker[], signal: AbortSignal): Promise<void> {
  const onAbort = () => workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await Promise.all(workers.map((w) => w.run()));
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Workers running in this process, with a client on the same service. */
export interface InProcessWorkers {
  client: Client;
  /** The workers' connection, for extra workers on the same service. */
  native: NativeConnection;
  workers: Worker[];
  /** The visibility gauges, when asked for. */
  gauges?: VisibilityGauges;
  /** The policy the workers run with (an in-process capability key listed in it when none was given). */
  policy: CompliancePolicy;
  /** The key capability tokens are signed with. */
  capabilityKey: CapabilityKey;
  /** Shuts the workers down gracefully, then closes both connections. */
  stop(): Promise<void>;
}

/**
 * Connects to a Temporal service, creates the workers for `options.roles` and runs them until
 * `stop()`. Tests, benchmarks and scripts share this; `agent-judge dev` adds its own server.
 */
export async function startWorkersInProcess(
  address: string,
  options: Omit<WorkerOptions, 'connection' | 'client'> & {
    /** Also report the visibility gauges (open proposals, oldest escalation, retention) every `intervalMs`. */
    visibilityGauges?: { intervalMs?: number };
  },
): Promise<InProcessWorkers> {
  // One process runs everything: like `dev`, it makes a capability key of its own and lists it.
  const capabilityKey = options.capabilityKey ?? (await inProcessCapabilityKey());
  const policy = options.capabilityKey ? options.policy : withCapabilityIssuer(options.policy, capabilityKey);
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: options.namespace });
  const native = await NativeConnection.connect({ address });
  const workers = await createWorkers({ ...options, policy, capabilityKey, connection: native, client });
  const running = workers.map((w) => w.run());
  const gauges = options.visibilityGauges
    ? startVisibilityGauges({
        client,
        namespace: options.namespace,
        taskQueue: options.taskQueues.workflow,
        meter: Runtime.instance().metricMeter,
        logger: options.logger,
        intervalMs: options.visibilityGauges.intervalMs,
      })
    : undefined;
  return {
    client,
    native,
    workers,
    gauges,
    policy,
    capabilityKey,
    async stop() {
      gauges?.stop();
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await Promise.allSettled(running);
      await native.close();
      await connection.close();
    },
  };
}
