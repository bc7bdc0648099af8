import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { Connection } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../names';
import { AgentJudgeError, SearchAttributeTypeError } from '../contracts/errors';
import { loadEnv } from '../config/env';
import { processEnv } from '../config/process-env';

export interface DevServerOptions {
  cliPath: string;
  port?: number;
  uiPort?: number;
  /** SQLite file; state survives restarts. Omit for an in-memory server. */
  dbFile?: string;
  namespace?: string;
  headless?: boolean;
  /** Where the server's own output goes (a file path); discarded when omitted. */
  logFile?: string;
  /** Readiness budget; a cold start on a busy 2-core machine can take a while. */
  readyTimeoutMs?: number;
  ip?: string;
  /**
   * Dynamic config values (`--dynamic-config-value K=JSON`); default {@link DEV_SERVER_DYNAMIC_CONFIG}, with
   * {@link DEV_SERVER_FAIRNESS} when `fairness` is true. Pass `{}` for the stock server (benchmarks compare the two).
   */
  dynamicConfig?: Readonly<Record<string, unknown>>;
  /**
   * Task-queue fairness between agents (docs/gate.md "Fairness between agents"); default off, on with
   * `AGENT_JUDGE_TEMPORAL_FAIRNESS=on` in `env`. Ignored when `dynamicConfig` is given.
   */
  fairness?: boolean;
  /** Where `AGENT_JUDGE_TEMPORAL_FAIRNESS` is read when `fairness` is not given (default: the process's). */
  env?: NodeJS.ProcessEnv;
  /** Port of the server's own Prometheus `/metrics` (`--metrics-port`); default a free one. */
  metricsPort?: number;
}

/**
 * Task-queue fairness (issue 38), OFF by default: matching dispatches the backlog of each fairness key in turn, and
 * every proposal is started with its agent id as its key (src/client/proposals/fairness.ts), so with these settings one
 * agent's backlog should wait behind its own tasks, not in front of another agent's. Not on by default because it did
 * not measurably help: in three interleaved runs of `npm run bench:fairness` on this 2-core machine a second agent's
 * p95 during a flood was better with it in some runs and worse in others (docs/performance.md §7). Opt in with
 * `fairness: true` or `AGENT_JUDGE_TEMPORAL_FAIRNESS=on`; a backlog written with it off is still dispatched after it
 * is turned on, and the other way round (tried on a persisted dev server, both ways).
 */
export const DEV_SERVER_FAIRNESS: Readonly<Record<string, unknown>> = Object.freeze({
  'matching.useNewMatcher': true,
  'matching.enableFairness': true,
});

/**
 * Settings that make a single-machine dev server dispatch work as fast as a worker can take it. `start-dev` runs one
 * history shard whose queues are read at most 20 times a second by default, so every new workflow task (and every
 * activity on another task queue) waited 0-50 ms before a worker could see it. That setting changes no semantics: it
 * only lets the shard's queue processors poll more often when there is work (docs/performance.md has the figures).
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, unknown>> = Object.freeze({
  'history.transferProcessorMaxPollRPS': 10000,
});

export interface DevServer {
  address: string;
  namespace: string;
  uiUrl: string | null;
  /** The server's own `/metrics` (Temporal server metrics: persistence, matching, history). */
  metricsUrl: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** A free TCP port on the loopback interface. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolvePort(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** {@link DEV_SERVER_DYNAMIC_CONFIG}, and {@link DEV_SERVER_FAIRNESS} when `fairness` is true. */
export function devServerDynamicConfig(fairness: boolean): Readonly<Record<string, unknown>> {
  return fairness ? { ...DEV_SERVER_DYNAMIC_CONFIG, ...DEV_SERVER_FAIRNESS } : DEV_SERVER_DYNAMIC_CONFIG;
}

/** The exact `temporal` arguments {@link startDevServer} runs: pure, so the settings we pass are unit tested. */
export function devServerArgs(
  options: Pick<DevServerOptions, 'dbFile' | 'dynamicConfig' | 'fairness'> & {
    ip: string;
    port: number;
    namespace: string;
    headless: boolean;
    uiPort: number | null;
    metricsPort?: number;
  },
): string[] {
  const args = ['server', 'start-dev', '--ip', options.ip, '--port', String(options.port)];
  args.push('--namespace', options.namespace, '--log-level', 'warn');
  if (options.headless || options.uiPort === null) args.push('--headless');
  else args.push('--ui-port', String(options.uiPort));
  if (options.metricsPort !== undefined) args.push('--metrics-port', String(options.metricsPort));
  if (options.dbFile) args.push('--db-filename', options.dbFile, '--sqlite-pragma', 'journal_mode=WAL');
  for (const sa of SEARCH_ATTRIBUTE_DEFINITIONS) args.push('--search-attribute', `${sa.name}=${sa.type}`);
  for (const [key, value] of Object.entries(
    options.dynamicConfig ?? devServerDynamicConfig(options.fairness ?? false),
  )) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  return args;
}

/**
 * Starts `temporal server start-dev` and waits until its frontend answers health checks. We spawn
 * it ourselves instead of using the SDK's `createLocal`, whose 5 s start budget is too short on a
 * busy 2-core machine (CONTRIBUTING.md).
 */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const ip = options.ip ?? '127.0.0.1';
  const port = options.port ?? (await freePort());
  const namespace = options.namespace ?? 'default';
  const headless = options.headless ?? false;
  const uiPort = headless ? null : (options.uiPort ?? port + 1000);
  if (options.dbFile) mkdirSync(dirname(options.dbFile), { recursive: true });
  const metricsPort = options.metricsPort ?? (await freePort());
  const fairness = options.fairness ?? loadEnv(options.env ?? processEnv()).AGENT_JUDGE_TEMPORAL_FAIRNESS ?? false;
  const args = devServerArgs({ ...options, fairness, ip, port, namespace, headless, uiPort, metricsPort });
  let out: 'ignore' | number = 'ignore';
  if (options.logFile) {
    mkdirSync(dirname(options.logFile), { recursive: true });
    out = openSync(options.logFile, 'a');
  }
  const child = spawn(options.cliPath, args, { stdio: ['ignore', out, out], detached: false });
  let exited: { code: number | null; signal: string | null } | null = null;
  child.on('exit', (code, signal) => {
    exited = { code, signal };
  });

  const address = `${ip}:${port}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (exited) {
      const e = exited as { code: number | null; signal: string | null };
      throw new AgentJudgeError(
        `temporal server start-dev exited early (code ${e.code}, signal ${e.signal})` +
          (options.logFile ? `; see ${options.logFile}` : '') +
          ` (is port ${port} or ${uiPort ?? ''} in use, or the db file locked by another server?)`,
      );
    }
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new AgentJudgeError(`temporal server start-dev did not become ready on ${address} in time`);
    }
    if (await isReady(address, namespace)) break;
    await new Promise((r) => setTimeout(r, 250));
  }

  return {
    address,
    namespace,
    uiUrl: uiPort ? `http://${ip}:${uiPort}` : null,
    metricsUrl: `http://${ip}:${metricsPort}/metrics`,
    process: child,
    async stop() {
      if (exited) return;
      await new Promise<void>((resolveStop) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolveStop();
        });
        child.kill('SIGTERM');
      });
    },
  };
}

async function isReady(address: string, namespace: string): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: 1000 });
    await connection.workflowService.describeNamespace({ namespace });
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => {});
  }
}

/**
 * Registers this project's search attributes on a namespace where they are missing: a reused
 * SQLite file or an external cluster does not get them from start-dev flags. One that exists with another type
 * is refused with the commands that fix it: every workflow task that writes it would fail (a Bool written to a
 * Datetime attribute is `BadSearchAttributes`, retried forever).
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const types: Record<string, number | null | undefined> = {
    ...(existing.systemAttributes ?? {}),
    ...(existing.customAttributes ?? {}),
  };
  const wrong = SEARCH_ATTRIBUTE_DEFINITIONS.filter(
    (sa) => sa.name in types && types[sa.name] !== indexedValueType(sa.type),
  );
  if (wrong.length > 0) {
    const lines = wrong.map((sa) => {
      const found = TYPE_NAMES.find((t) => encodeSearchAttributeIndexedValueType(t) === types[sa.name]) ?? 'unknown';
      return (
        `${sa.name} is ${found} on namespace ${namespace}, expected ${sa.type.toUpperCase()}; fix it with:\n` +
        `  temporal operator search-attribute remove --namespace ${namespace} --name ${sa.name} --yes\n` +
        `  temporal operator search-attribute create --namespace ${namespace} --name ${sa.name} --type ${sa.type}`
      );
    });
    throw new SearchAttributeTypeError(`search attributes with the wrong type:\n${lines.join('\n')}`);
  }
  const missing = SEARCH_ATTRIBUTE_DEFINITIONS.filter((sa) => !(sa.name in types));
  if (missing.length === 0) return [];
  const searchAttributes = Object.fromEntries(missing.map((sa) => [sa.name, indexedValueType(sa.type)]));
  await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
  return missing.map((sa) => sa.name);
}

const TYPE_NAMES = ['TEXT', 'KEYWORD', 'INT', 'DOUBLE', 'BOOL', 'DATETIME', 'KEYWORD_LIST'] as const;

/** The wire enum from the SDK's own table: a hand-typed number once registered AuditFlag as Datetime (6, not 5). */
function indexedValueType(type: 'Keyword' | 'Bool'): number {
  return encodeSearchAttributeIndexedValueType(type === 'Bool' ? 'BOOL' : 'KEYWORD')!;
}
