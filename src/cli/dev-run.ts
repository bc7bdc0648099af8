/**
 * `agent-judge dev`: everything on one machine. It starts the embedded Temporal dev server, then the workers and the
 * services beside them (inbox, hook gate, Discord bot, Slack app), prints a banner, and stops it all on a signal.
 */
import { resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime } from '@temporalio/worker';
import type { Command } from 'commander';
import { loadEnv, type Env } from '../config/env';
import { processEnv } from '../config/process-env';
import { BadInputError } from '../contracts/errors';
import { ensureSearchAttributes, freePort, startDevServer } from '../devserver/server';
import { findTemporalCli } from '../devserver/temporal-cli';
import { createNotifiersFromEnv } from '../escalation/notifiers';
import {
  ensureCapabilityKeyFile,
  loadCapabilityKey,
  withCapabilityIssuer,
  type CapabilityKey,
} from '../identity/capability-key';
import { resolveUnsignedDecisions } from '../identity/decision';
import { startVisibilityGauges } from '../metrics/gauges';
import { DEFAULT_DEV_METRICS_ADDRESS } from '../metrics/telemetry';
import { taskQueuesFor } from '../names';
import { examplePath } from '../package-root';
import { DEFAULT_POLICY_PATH, loadPolicyLayers } from '../policy/load';
import { createWorkers, runWorkers, WORKER_ROLES } from '../worker';
import { announceWorkerPolicy } from '../worker/policy-publication';
import { hooksAuditLogPath } from '../audit/mcp-log';
import { prepareAudit } from './audit-setup';
import { DISCORD_OFF, describeDecisionSigning, describePolicy, describeSlack } from './dev-banner';
import { CONTINUED, startDevHookGate, startDevInbox } from './dev-services';
import { DEFAULT_INBOX_STATE_DIR } from './inbox';
import { clearRunningDev, userStateDir, writeRunningDev } from '../config/user-state';
import { startDiscordBotFromEnv } from './discord';
import {
  circleOperatorKeys,
  describeCapabilities,
  describeCircles,
  describeJudge,
  passkeyReader,
} from './server-config';
import {
  describeMetrics,
  installRuntimeLogging,
  metricsExportFrom,
  portFree,
  type MetricsFlags,
} from './server-telemetry';
import { createLogger, globalTarget, untilSignal } from './shared';
import { startSlackAppFromEnv } from './slack';

/** Where `dev` keeps the capability key it makes on first start. */
export const DEV_CAPABILITY_KEY_PATH = '.agent-judge/capability.key';

/**
 * `dev`: the capability key from AGENT_JUDGE_CAPABILITY_KEY, else the one in the state folder (made
 * on first start), listed in the policy `dev` runs with, so approved actions get tokens out of the box.
 */
async function devCapabilityKey(env: Env): Promise<CapabilityKey> {
  const configured = env.AGENT_JUDGE_CAPABILITY_KEY;
  return configured ? loadCapabilityKey(configured) : ensureCapabilityKeyFile(resolve(DEV_CAPABILITY_KEY_PATH));
}

export interface DevOptions {
  port: string;
  uiPort?: string;
  db: string;
  policy?: string;
  headless?: boolean;
  /** `pretty` or `json`; else `LOG_FORMAT`, else pretty on a terminal. */
  logFormat?: string;
  /** The hooks' gate port (else the policy's `spec.hooks.gate.listen`, moved when taken). */
  gatePort?: string;
  /** The inbox port (else 8787, moved when taken). */
  inboxPort?: string;
  /** The Prometheus `/metrics` port on loopback (else --metrics, else 9464 moved when taken). */
  metricsPort?: string;
}

/** A `--*-port` flag: undefined when not given, else a port number (bad input names the flag). */
function portFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port < 1 || port > 65535)
    throw new BadInputError(`${flag}: expected 1-65535, got ${value}`);
  return port;
}

/** A chosen port that is taken stops `dev` before anything starts, naming the flag. */
async function requireFree(flag: string, address: string): Promise<void> {
  if (!(await portFree(address))) {
    throw new BadInputError(`${flag}: ${address} is taken; choose another port or stop what listens there`);
  }
}

/** `agent-judge dev`: embedded Temporal dev server, all workers, the Discord bot when configured. */
export async function runDev(opts: DevOptions & MetricsFlags, cmd: Command): Promise<void> {
  const port = Number(opts.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new BadInputError(`--port: expected 1-65535, got ${opts.port}`);
  const uiPort = opts.uiPort === undefined ? port + 1000 : Number(opts.uiPort);
  if (!Number.isInteger(uiPort) || uiPort < 1 || uiPort > 65535)
    throw new BadInputError(`--ui-port: expected 1-65535, got ${opts.uiPort}`);
  const env = loadEnv();
  const namespace = globalTarget(cmd).namespace ?? env.TEMPORAL_NAMESPACE ?? 'default';
  const logger = createLogger({ env, format: opts.logFormat });
  const policyPath = resolve(opts.policy ?? env.AGENT_JUDGE_POLICY ?? DEFAULT_POLICY_PATH);
  const capabilityKey = await devCapabilityKey(env);
  const loaded = await loadPolicyLayers({ path: policyPath });
  const signing = resolveUnsignedDecisions(loaded.policy, 'dev');
  const policy = withCapabilityIssuer(signing.policy, capabilityKey);
  const gatePort = portFlag('--gate-port', opts.gatePort);
  const inboxPort = portFlag('--inbox-port', opts.inboxPort);
  const metricsPort = portFlag('--metrics-port', opts.metricsPort);
  if (metricsPort !== undefined && (opts.metrics !== undefined || opts.otlp !== undefined))
    throw new BadInputError('--metrics-port: give either --metrics-port or --metrics/--otlp');
  if (gatePort !== undefined) {
    const { parseGateListen } = await import('../hooks/resident');
    await requireFree('--gate-port', `${parseGateListen(policy.spec.hooks.gate.listen).host}:${gatePort}`);
  }
  if (inboxPort !== undefined) await requireFree('--inbox-port', `127.0.0.1:${inboxPort}`);
  if (metricsPort !== undefined) await requireFree('--metrics-port', `127.0.0.1:${metricsPort}`);
  let metrics = metricsExportFrom(
    metricsPort !== undefined ? { ...opts, metrics: `127.0.0.1:${metricsPort}` } : opts,
    DEFAULT_DEV_METRICS_ADDRESS,
  );
  let metricsMoved = '';
  // The default address moves aside when taken (another dev running), said in the banner; a chosen one is an error.
  const chosenMetrics = opts.metrics !== undefined || metricsPort !== undefined;
  if (metrics && 'prometheus' in metrics && !chosenMetrics && !(await portFree(metrics.prometheus))) {
    metricsMoved = `\n${CONTINUED}moved from ${metrics.prometheus}: it is taken (--metrics-port chooses one)`;
    metrics = { prometheus: `127.0.0.1:${await freePort()}` };
  } else if (metrics && 'prometheus' in metrics && opts.metrics !== undefined) {
    await requireFree('--metrics', metrics.prometheus);
  }
  const { signal, done } = untilSignal();

  const cliPath = findTemporalCli({ logger });
  const dbFile = resolve(opts.db);
  logger.info({ cliPath, dbFile }, 'starting the Temporal dev server');
  const server = await startDevServer({
    cliPath,
    port,
    uiPort,
    dbFile,
    namespace,
    headless: opts.headless,
    logFile: resolve('.agent-judge/temporal.log'),
    readyTimeoutMs: 90_000,
  });
  installRuntimeLogging(logger, env, metrics);
  const connection = await Connection.connect({ address: server.address });
  await ensureSearchAttributes(connection, namespace);
  const client = new Client({ connection, namespace });
  const native = await NativeConnection.connect({ address: server.address });
  const taskQueues = taskQueuesFor();
  const audit = await prepareAudit({
    connection,
    client,
    namespace,
    policy,
    taskQueues,
    logger,
    setRetention: true,
    archive: true,
  });
  // The inbox starts before the notifiers, so escalations link to it (unless AGENT_JUDGE_INBOX_URL names another).
  const inbox = await startDevInbox(
    policy,
    client,
    env.AGENT_JUDGE_PASSKEYS ?? DEV_PASSKEYS_PATH,
    taskQueues.workflow,
    logger,
    inboxPort,
  );
  const notifiers = await createNotifiersFromEnv(
    inbox.url && !env.AGENT_JUDGE_INBOX_URL ? { ...processEnv(), AGENT_JUDGE_INBOX_URL: inbox.url } : processEnv(),
    logger,
  );
  const judge = await describeJudge(policy);
  const operatorKeys = circleOperatorKeys(env);
  const workers = await createWorkers({
    connection: native,
    namespace,
    taskQueues,
    policy,
    client,
    logger,
    notifiers,
    judge: judge.deps,
    circleOperatorKeys: operatorKeys,
    capabilityKey,
    passkeys: passkeyReader(env.AGENT_JUDGE_PASSKEYS ?? DEV_PASSKEYS_PATH, logger),
  });
  const running = runWorkers(workers, signal);
  const inForce = await announceWorkerPolicy({
    client,
    workflowTaskQueue: taskQueues.workflow,
    loaded,
    policy,
    roles: WORKER_ROLES,
    logger,
    inboxUrl: env.AGENT_JUDGE_INBOX_URL ?? inbox.url,
  });
  const gauges = startVisibilityGauges({
    client,
    lastReviewClosed: async () => (await import('../client/reviews')).lastReviewClosed(client),
    namespace,
    taskQueue: taskQueues.workflow,
    meter: Runtime.instance().metricMeter,
    logger,
  });
  const bot = await startDiscordBotFromEnv({ client, policy, logger });
  const slack = await startSlackAppFromEnv({ client, policy, logger });
  const hooksGate = await startDevHookGate({
    policy,
    client,
    taskQueue: taskQueues.workflow,
    logger,
    port: gatePort,
    userStateDir: userStateDir(),
  });
  // Where this dev is, for `hook install` in any project and for commands in other terminals (no TEMPORAL_ADDRESS).
  const record = writeRunningDev({
    pid: process.pid,
    started_at: new Date().toISOString(),
    cwd: process.cwd(),
    temporal: { address: server.address, namespace, ui_url: server.uiUrl ?? null },
    gate: hooksGate.url
      ? {
          url: hooksGate.url,
          token_file: hooksGate.tokenFile ?? null,
          audit_log: hooksAuditLogPath(resolve('.agent-judge')),
        }
      : null,
    inbox: inbox.url ? { url: inbox.url, state_dir: resolve(DEFAULT_INBOX_STATE_DIR) } : null,
    metrics: metrics && 'prometheus' in metrics ? `http://${metrics.prometheus}/metrics` : null,
    task_queue: taskQueues.workflow,
  });

  const lines = [
    'agent-judge is running',
    `temporal    ${server.address} (namespace ${namespace})`,
    `${CONTINUED}other terminals find it (and the gate, the inbox) in ${record}`,
    `web ui      ${server.uiUrl ?? 'off (--headless)'}`,
    `database    ${dbFile}`,
    `metrics     ${describeMetrics(metrics)} (server: ${server.metricsUrl})${metricsMoved}`,
    `queues      ${taskQueues.workflow} (workflows), ${taskQueues.judge} (judge), ${taskQueues.execute} (executor)`,
    ...describePolicy(policy, policyPath),
    `in force    ${inForce}`,
    `judge       ${judge.description}`,
    `circles     ${describeCircles(operatorKeys)}`,
    `capability  ${describeCapabilities(policy, capabilityKey)}`,
    `decisions   ${describeDecisionSigning(signing, policy.spec.escalation.approvers.length)}`,
    `discord     ${bot ? 'escalations go to Discord (bot connected)' : DISCORD_OFF}`,
    `slack       ${describeSlack(slack, env)}`,
    `hooks       ${hooksGate.line}`,
    `inbox       ${inbox.line}`,
    ...audit,
    `try         agent-judge propose ${examplePath('memory-write.json')} --wait`,
    'stop        Ctrl-C',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);

  const sig = await Promise.race([done, running.then(() => 'workers stopped')]);
  logger.info({ reason: sig }, 'shutting down');
  gauges.stop();
  clearRunningDev();
  await hooksGate.close();
  await inbox.close();
  await bot?.stop().catch((err: unknown) => logger.error({ err }, 'discord bot stop failed'));
  await slack?.stop().catch((err: unknown) => logger.error({ err }, 'slack app stop failed'));
  await running.catch((err: unknown) => logger.error({ err }, 'worker failed'));
  await native.close();
  await connection.close();
  await server.stop();
  process.stdout.write('agent-judge stopped\n');
}

/** Where `dev` keeps the approvers' passkeys when AGENT_JUDGE_PASSKEYS is unset (the inbox writes it). */
export const DEV_PASSKEYS_PATH = '.agent-judge/passkeys.json';
