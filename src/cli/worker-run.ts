/**
 * `agent-judge worker`: workers only, of the roles asked for, against an existing Temporal service. A workflow worker
 * refuses to start without its capability key and checks the search attributes before it polls.
 */
import { Client } from '@temporalio/client';
import { NativeConnection, Runtime } from '@temporalio/worker';
import type { Command } from 'commander';
import { connect, temporalTarget } from '../client/connection';
import { loadEnv } from '../config/env';
import { processEnv } from '../config/process-env';
import { BadInputError, SearchAttributeTypeError } from '../contracts/errors';
import { ensureSearchAttributes } from '../devserver/server';
import { createNotifiersFromEnv } from '../escalation/notifiers';
import { loadCapabilityKey } from '../identity/capability-key';
import { resolveUnsignedDecisions } from '../identity/decision';
import { startVisibilityGauges } from '../metrics/gauges';
import { taskQueuesFor } from '../names';
import { loadPolicyLayers } from '../policy/load';
import { createWorkers, requireCapabilityKey, runWorkers, WORKER_ROLES, type WorkerRole } from '../worker';
import { announceWorkerPolicy } from '../worker/policy-publication';
import { prepareAudit } from './audit-setup';
import {
  circleOperatorKeys,
  describeCapabilities,
  describeCircles,
  describeJudge,
  passkeyReader,
} from './server-config';
import { describeMetrics, installRuntimeLogging, metricsExportFrom, type MetricsFlags } from './server-telemetry';
import { createLogger, globalTarget, untilSignal } from './shared';

function parseRoles(value: string): WorkerRole[] {
  const roles = value
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  for (const r of roles) {
    if (!WORKER_ROLES.includes(r as WorkerRole))
      throw new BadInputError(`--role: ${r} is not one of ${WORKER_ROLES.join(', ')}`);
  }
  return roles as WorkerRole[];
}

export type WorkerCommandOptions = {
  role: string;
  policy?: string;
  taskQueuePrefix?: string;
  logFormat?: string;
} & MetricsFlags;

/** `agent-judge worker`: workers only, against an existing Temporal service. */
export async function runWorker(opts: WorkerCommandOptions, cmd: Command): Promise<void> {
  const env = loadEnv();
  const roles = parseRoles(opts.role);
  const metrics = metricsExportFrom(opts, null);
  const operatorKeys = circleOperatorKeys(env);
  const logger = createLogger({ env, format: opts.logFormat });
  const loaded = await loadPolicyLayers({ path: opts.policy ?? env.AGENT_JUDGE_POLICY });
  const signing = resolveUnsignedDecisions(loaded.policy, 'worker');
  const policy = signing.policy;
  if (
    signing.refused &&
    signing.keyless.length > 0 &&
    loaded.policy.spec.escalation.requireSignedDecisions === undefined
  )
    logger.warn(
      { approvers: signing.keyless },
      'unsigned decisions are refused: these approvers have no key in spec.escalation.approverKeys and cannot decide ' +
        'until they have one (spec.escalation.requireSignedDecisions: false accepts unsigned decisions)',
    );
  // Only the workflow worker signs tokens; the judge and executor workers never read the key.
  const capabilityKey =
    roles.includes('workflow') && env.AGENT_JUDGE_CAPABILITY_KEY
      ? await loadCapabilityKey(env.AGENT_JUDGE_CAPABILITY_KEY)
      : undefined;
  // Refused before connecting: a workflow worker without a listed key must not start at all.
  if (roles.includes('workflow')) requireCapabilityKey({ policy, capabilityKey });
  const target = temporalTarget(globalTarget(cmd));
  installRuntimeLogging(logger, env, metrics);
  const connection = await connect(target);
  if (roles.includes('workflow')) {
    try {
      const added = await ensureSearchAttributes(connection, target.namespace);
      if (added.length > 0) logger.info({ added }, 'registered search attributes');
    } catch (err) {
      // A wrong type is certain breakage (workflow tasks that write it fail forever): refuse to start. Anything
      // else (no operator permission on a managed cluster) only means we could not look.
      if (err instanceof SearchAttributeTypeError) throw err;
      logger.warn(
        { err: (err as Error).message },
        'could not check search attributes; register them as README describes',
      );
    }
  }
  const client = new Client({ connection, namespace: target.namespace });
  const native = await NativeConnection.connect({
    address: target.address,
    tls: target.tls,
    apiKey: target.apiKey,
    metadata: target.metadata,
  });
  const taskQueues = taskQueuesFor(opts.taskQueuePrefix);
  await prepareAudit({
    connection,
    client,
    namespace: target.namespace,
    policy,
    taskQueues,
    logger,
    setRetention: false,
    archive: roles.includes('archive'),
  });
  const { signal, done } = untilSignal();
  const judge = roles.includes('judge') ? await describeJudge(policy) : undefined;
  const workers = await createWorkers({
    connection: native,
    namespace: target.namespace,
    taskQueues,
    policy,
    client,
    roles,
    logger,
    notifiers: roles.includes('workflow') ? await createNotifiersFromEnv(processEnv(), logger) : [],
    judge: judge?.deps,
    circleOperatorKeys: operatorKeys,
    ...(capabilityKey ? { capabilityKey } : {}),
    ...(roles.includes('workflow') && env.AGENT_JUDGE_PASSKEYS
      ? { passkeys: passkeyReader(env.AGENT_JUDGE_PASSKEYS, logger) }
      : {}),
  });
  if (roles.includes('workflow')) {
    logger.info({ circles: describeCircles(operatorKeys) }, 'circle registry operator keys');
    logger.info({ capabilities: describeCapabilities(policy, capabilityKey) }, 'capability tokens');
  }
  if (judge) logger.info({ judge: judge.description }, 'judge configuration');
  const running = runWorkers(workers, signal);
  const gauges = roles.includes('workflow')
    ? startVisibilityGauges({
        client,
        lastReviewClosed: async () => (await import('../client/reviews')).lastReviewClosed(client),
        namespace: target.namespace,
        taskQueue: taskQueues.workflow,
        meter: Runtime.instance().metricMeter,
        logger,
      })
    : undefined;
  logger.info(
    { address: target.address, namespace: target.namespace, roles, taskQueues, metrics: describeMetrics(metrics) },
    'workers running; Ctrl-C to stop',
  );
  // Logged by itself, after the workers run (never holding up their start): a workflow worker publishes its policy,
  // any other worker compares its own with the one published. It never throws.
  void announceWorkerPolicy({
    client,
    workflowTaskQueue: taskQueues.workflow,
    loaded,
    policy,
    roles,
    logger,
    ...(env.AGENT_JUDGE_INBOX_URL ? { inboxUrl: env.AGENT_JUDGE_INBOX_URL } : {}),
  });
  await Promise.race([done, running]);
  gauges?.stop();
  await running.catch((err: unknown) => logger.error({ err }, 'worker failed'));
  await native.close();
  await connection.close();
}
