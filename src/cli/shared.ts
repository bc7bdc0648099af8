/**
 * Plumbing every command shares: one way to get a client, read `--since`, wait for Ctrl-C and make
 * a logger. Commands stay thin; behaviour that differs between them would be a bug.
 */
import type { Client } from '@temporalio/client';
import type { Command } from 'commander';
import { pino } from 'pino';
import pretty from 'pino-pretty';
import { connectClient, temporalTarget } from '../client/connection';
import { loadEnv, type Env } from '../config/env';
import { BadInputError } from '../contracts/errors';
import type { Logger } from '../contracts/logger';

/** The global `--address` / `--namespace`, which win over the environment. */
export function globalTarget(cmd: Command): { address?: string; namespace?: string } {
  const opts = cmd.optsWithGlobals<{ address?: string; namespace?: string }>();
  return { address: opts.address, namespace: opts.namespace };
}

/** Runs `fn` with a client connected as the global options and the environment say; always closes it. */
export async function withClient<T>(cmd: Command, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = await connectClient(temporalTarget(globalTarget(cmd)));
  try {
    return await fn(client);
  } finally {
    await client.connection.close();
  }
}

export { parseDuration, parseSince, sinceWindowMs } from './since';

/**
 * Aborts `signal` and resolves `done` with the signal's name on the first SIGINT or SIGTERM; the
 * caller then shuts down in order (bot, workers, connections, server).
 */
export function untilSignal(): { signal: AbortSignal; done: Promise<string> } {
  const controller = new AbortController();
  const done = new Promise<string>((resolveSignal) => {
    const on = (sig: string) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      controller.abort();
      resolveSignal(sig);
    };
    const onInt = () => on('SIGINT');
    const onTerm = () => on('SIGTERM');
    process.once('SIGINT', onInt);
    process.once('SIGTERM', onTerm);
  });
  return { signal: controller.signal, done };
}

/** How logs look on stderr. */
export type LogFormat = 'pretty' | 'json';

/**
 * Readable lines for a person at a terminal, JSON for machines: an explicit choice (flag, then
 * `LOG_FORMAT`) wins; otherwise pretty only when stderr is a TTY.
 */
export function chooseLogFormat(options: { flag?: string; env?: Env; isTTY?: boolean }): LogFormat {
  const explicit = options.flag ?? options.env?.LOG_FORMAT;
  if (explicit !== undefined) {
    if (explicit !== 'pretty' && explicit !== 'json') {
      throw new BadInputError(`--log-format: expected pretty or json, got ${JSON.stringify(explicit)}`);
    }
    return explicit;
  }
  return options.isTTY === true ? 'pretty' : 'json';
}

/**
 * The one logger factory: level from `LOG_LEVEL`, format from {@link chooseLogFormat}, always on stderr. The only place
 * that imports pino: a command makes its logger here once and passes it down as the interface every module takes.
 * Both formats write synchronously, so log lines and a command's own lines on stderr (the MCP proxy's last line, which
 * says why it ends) come out in the order they were written.
 */
export function createLogger(options: { format?: string; env?: Env } = {}): Logger {
  const env = options.env ?? loadEnv();
  const format = chooseLogFormat({ flag: options.format, env, isTTY: process.stderr.isTTY });
  const settings = { level: env.LOG_LEVEL ?? 'info', base: { app: 'agent-judge' } };
  if (format === 'json') return pino(settings, pino.destination({ dest: 2, sync: true }));
  return pino(
    settings,
    pretty({
      destination: 2,
      sync: true,
      colorize: process.stderr.isTTY === true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,app',
    }),
  );
}
