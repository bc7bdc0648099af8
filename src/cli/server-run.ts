import { resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { Command } from 'commander';
import type { Logger } from '../contracts/logger';
import { connect, temporalTarget } from '../client/connection';
import type { CompliancePolicy } from '../contracts/policy';
import { createServer } from 'node:net';
import { ensureSearchAttributes, freePort, startDevServer } from '../devserver/server';
import { findTemporalCli } from '../devserver/temporal-cli';
import { BadInputError, SearchAttributeTypeError } from '../contracts/errors';
import { DEFAULT_POLICY_PATH, loadPolicyLayers } from '../policy/load';
import { announceWorkerPolicy } from '../worker/policy-publication';
import { taskQueuesFor } from '../names';
import { resolveUnsignedDecisions } from '../identity/decision';
import { PasskeyRegistryReader } from '../identity/passkey-registry';
import type { ApproverPasskeys } from '../contracts/passkey';
import { createWorkers, requireCapabilityKey, runWorkers, WORKER_ROLES, type WorkerRole } from '../worker';
import { createNotifiersFromEnv } from '../escalation/notifiers';
import { startDiscordBotFromEnv } from './discord';
import { startSlackAppFromEnv } from './slack';
import { resolveJudge, type ResolvedJudge } from '../judge/discover';
import { signingKeyFor } from '../identity/decision';
import { PublicKeySchema } from '../contracts/identity';
import { loadEnv, type Env } from '../config/env';
import { createLogger, globalTarget, untilSignal } from './shared';
import { prepareAudit } from './audit-setup';
import {
  DEFAULT_DEV_METRICS_ADDRESS,
  parseBindAddress,
  parseOtlpUrl,
  telemetryOptions,
  type MetricsExport,
} from '../metrics/telemetry';
import { startVisibilityGauges } from '../metrics/gauges';
import {
  ensureCapabilityKeyFile,
  loadCapabilityKey,
  withCapabilityIssuer,
  type CapabilityKey,
} from '../identity/capability-key';
import { processEnv } from '../config/process-env';

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

function describeCapabilities(policy: CompliancePolicy, key: CapabilityKey | undefined): string {
  const ttl = String(policy.spec.capabilities.ttl);
  return key
    ? `tokens signed with key ${key.kid} (public ${key.publicKey}), valid ${ttl}`
    : `${Object.keys(policy.spec.capabilities.issuers).length} issuer key(s) in the policy, valid ${ttl}`;
}

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

/** The metrics options every server command shares. */
export interface MetricsFlags {
  /** `HOST:PORT` for the Prometheus `/metrics`, or `off`. */
  metrics?: string;
  /** An OTLP collector URL instead of the Prometheus endpoint. */
  otlp?: string;
  otlpHttp?: boolean;
}

/** Where metrics go, from the flags; `fallback` is the default Prometheus address (null: none). */
export function metricsExportFrom(flags: MetricsFlags, fallback: string | null): MetricsExport {
  if (flags.otlp !== undefined) {
    if (flags.metrics !== undefined && flags.metrics !== 'off')
      throw new BadInputError('--otlp: the SDK exports to one place; pass --metrics off or leave --metrics out');
    return { otlp: { url: parseOtlpUrl(flags.otlp, '--otlp'), http: flags.otlpHttp ?? false } };
  }
  if (flags.otlpHttp) throw new BadInputError('--otlp-http: needs --otlp <url>');
  const address = flags.metrics ?? fallback;
  if (address === null || address === 'off') return null;
  return { prometheus: parseBindAddress(address, '--metrics') };
}

/** True when nothing listens on `host:port` yet (the dev default moves aside for a busy port). */
function portFree(address: string): Promise<boolean> {
  const i = address.lastIndexOf(':');
  return new Promise((resolveFree) => {
    const srv = createServer();
    srv.once('error', () => resolveFree(false));
    srv.listen(Number(address.slice(i + 1)), address.slice(0, i).replace(/^\[|\]$/g, ''), () =>
      srv.close(() => resolveFree(true)),
    );
  });
}

/** A line for the startup banner: where to scrape, or where metrics are pushed. */
function describeMetrics(exp: MetricsExport): string {
  if (exp === null) return 'off (--metrics HOST:PORT to serve /metrics)';
  if ('otlp' in exp) return `pushed over OTLP/${exp.otlp.http ? 'HTTP' : 'gRPC'} to ${exp.otlp.url}`;
  return `http://${exp.prometheus}/metrics`;
}

function installRuntimeLogging(logger: Logger, env: Env, metrics: MetricsExport = null): void {
  const level = env.TEMPORAL_LOG_LEVEL ?? 'WARN';
  Runtime.install({
    telemetryOptions: telemetryOptions(metrics),
    logger: new DefaultLogger(level, (entry) => {
      // Activity-only workers (judge, executor) poll no workflows by design.
      if (entry.message.startsWith('No workflows registered')) return;
      const fn = entry.level === 'ERROR' ? logger.error : entry.level === 'WARN' ? logger.warn : logger.info;
      fn.call(logger, { temporal: entry.meta }, entry.message);
    }),
  });
}

const NO_APPROVERS = 'none: escalations will time out; add some with AGENT_JUDGE_APPROVERS=you';
const DISCORD_OFF = 'off: set DISCORD_TOKEN to get escalations in Discord (see docs/discord.md)';
const SLACK_OFF = 'off: set SLACK_BOT_TOKEN to get escalations in Slack (see docs/slack.md)';

function describeSlack(slack: { mode: 'http' | 'socket'; url?: string } | null, env: Env): string {
  if (slack) return `escalations go to Slack (${slack.mode === 'socket' ? 'Socket Mode' : slack.url})`;
  if (env.SLACK_BOT_TOKEN) return 'posting only: set SLACK_SIGNING_SECRET or SLACK_APP_TOKEN to hear clicks';
  return SLACK_OFF;
}

function describePolicy(policy: CompliancePolicy, path: string): string[] {
  const approvers = policy.spec.escalation.approvers;
  const unsigned = approvers.filter((a) => !signingKeyFor(policy, a));
  return [
    `policy      ${path} (${policy.metadata.name})`,
    `approvers   ${approvers.length > 0 ? approvers.join(', ') : NO_APPROVERS}`,
    ...(unsigned.length > 0
      ? [
          `            unsigned: ${unsigned.join(', ')} (anyone with access to the namespace can claim ` +
            'these ids; give them keys in escalation.approverKeys)',
        ]
      : []),
    ...Object.entries(policy.spec.escalation.quorum)
      .filter(([, n]) => (n ?? 1) > approvers.length && approvers.length > 0)
      .map(
        ([tier, n]) =>
          `            warning: ${tier} needs ${n} approvals but only ${approvers.length} approver(s) ` +
          'are listed; those escalations can only time out',
      ),
  ];
}

/** `AGENT_JUDGE_CIRCLE_OPERATOR_KEYS`: comma-separated public keys allowed to sign registry operator actions. */
function circleOperatorKeys(env: Env): string[] {
  const keys = env.AGENT_JUDGE_CIRCLE_OPERATOR_KEYS ?? [];
  for (const k of keys) {
    if (!PublicKeySchema.safeParse(k).success) {
      throw new BadInputError(
        `AGENT_JUDGE_CIRCLE_OPERATOR_KEYS: ${JSON.stringify(k)} is not an Ed25519 public key (unpadded base64url)`,
      );
    }
  }
  return keys;
}

function describeCircles(keys: readonly string[]): string {
  return keys.length > 0
    ? `registry operator actions need a signature by one of ${keys.length} operator key(s)`
    : 'registry operator actions are unsigned (anyone with namespace access may register or retire agents); ' +
        'set AGENT_JUDGE_CIRCLE_OPERATOR_KEYS';
}

/**
 * Which model judges, or why none does and what then happens to full-judge-review proposals
 * (`spec.judge.withoutModel`). Probes Ollama for at most 1.5 s.
 */
function describeJudge(policy: CompliancePolicy): Promise<ResolvedJudge> {
  return resolveJudge(policy, processEnv(), { probeTimeoutMs: 1500 });
}

export interface DevOptions {
  port: string;
  uiPort?: string;
  db: string;
  policy?: string;
  headless?: boolean;
  /** `pretty` or `json`; else `LOG_FORMAT`, else pretty on a terminal. */
  logFormat?: string;
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
  let metrics = metricsExportFrom(opts, DEFAULT_DEV_METRICS_ADDRESS);
  // The default address moves aside when taken (another dev running); an explicit one is an error.
  if (metrics && 'prometheus' in metrics && opts.metrics === undefined && !(await portFree(metrics.prometheus)))
    metrics = { prometheus: `127.0.0.1:${await freePort()}` };
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
  const hooksGate = await startDevHookGate(policy, client, taskQueues.workflow, logger);

  const lines = [
    'agent-judge is running',
    `temporal    ${server.address} (namespace ${namespace})`,
    `web ui      ${server.uiUrl ?? 'off (--headless)'}`,
    `database    ${dbFile}`,
    `metrics     ${describeMetrics(metrics)} (server: ${server.metricsUrl})`,
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
    `try         agent-judge propose examples/memory-write.json --wait`,
    'stop        Ctrl-C',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);

  const sig = await Promise.race([done, running.then(() => 'workers stopped')]);
  logger.info({ reason: sig }, 'shutting down');
  gauges.stop();
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

/** The workflow worker's view of the passkey registry file: re-read when it changes (docs/inbox.md). */
function passkeyReader(path: string, logger: Logger): () => ApproverPasskeys {
  const reader = new PasskeyRegistryReader(resolve(path), logger);
  return () => reader.current();
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
  });
  await Promise.race([done, running]);
  gauges?.stop();
  await running.catch((err: unknown) => logger.error({ err }, 'worker failed'));
  await native.close();
  await connection.close();
}

/**
 * `dev`'s resident gate for coding agents' hooks (docs/hooks.md): on the policy's loopback address; a busy port or
 * any other failure leaves it off (said at start: the hooks then block, never allow).
 */
async function startDevHookGate(
  policy: CompliancePolicy,
  client: Client,
  taskQueue: string,
  logger: Logger,
): Promise<{ line: string; close: () => Promise<void> }> {
  try {
    const { startResidentGate } = await import('../hooks/resident');
    const gate = await startResidentGate({
      policy,
      client,
      taskQueue,
      stateDir: resolve('.agent-judge'),
      logger: logger.child({ component: 'hooks-gate' }),
    });
    return {
      line:
        `gate ${gate.url} for ${gate.agents.join(', ')}${gate.tokenFile ? ` (token ${gate.tokenFile})` : ''}; ` +
        'agent-judge hook install claude-code|codex|gemini',
      close: () => gate.close(),
    };
  } catch (err) {
    return {
      line: `off (${(err as Error).message}); hooks installed for this machine block until a gate runs`,
      close: () => Promise.resolve(),
    };
  }
}

/**
 * `dev`'s web approval inbox (docs/inbox.md) on loopback, port 8787 or any free one when that is taken; any other
 * failure leaves it off, said at start.
 */
async function startDevInbox(
  policy: CompliancePolicy,
  client: Client,
  registryPath: string,
  taskQueue: string,
  logger: Logger,
): Promise<{ line: string; url?: string; close: () => Promise<void> }> {
  try {
    const { DEFAULT_INBOX_PORT, DEFAULT_INBOX_STATE_DIR, serveInbox } = await import('./inbox');
    const options = {
      client,
      policy,
      registryPath: resolve(registryPath),
      stateDir: resolve(DEFAULT_INBOX_STATE_DIR),
      taskQueue,
      logger: logger.child({ component: 'inbox' }),
    };
    const inbox = await serveInbox({ ...options, port: DEFAULT_INBOX_PORT }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EADDRINUSE') throw err;
      return serveInbox({ ...options, port: 0 });
    });
    return {
      line: `${inbox.url}; enrol an approver's passkey: agent-judge inbox invite --approver <id>`,
      url: inbox.url,
      close: () => inbox.close(),
    };
  } catch (err) {
    return { line: `off (${(err as Error).message})`, close: () => Promise.resolve() };
  }
}

/** The banner's line on signed decisions: `dev` accepts unsigned ones by default, and says so. */
function describeDecisionSigning(signing: { refused: boolean; keyless: string[] }, approvers: number): string {
  if (signing.refused) return 'unsigned decisions are refused (spec.escalation.requireSignedDecisions)';
  if (approvers === 0) return 'no approvers listed';
  if (signing.keyless.length === 0) return 'every approver signs (spec.escalation.approverKeys)';
  return (
    `unsigned decisions accepted from ${signing.keyless.join(', ')} (dev only: agent-judge worker refuses them ` +
    'unless spec.escalation.requireSignedDecisions is false)'
  );
}
