/**
 * `agent-judge a2a`: the A2A front at the circle boundary. Serves an agent card per active
 * top-level agent of the circle registry and admits a message only when the registry allows the
 * caller's KNOCK (or takes its cross-circle request); see docs/a2a.md.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Command, Option } from 'commander';
import { CircleRegistryClient } from '../client/circles';
import { CIRCLE_REGISTRY_WORKFLOW_ID } from '../circles/names';
import { AmidSchema } from '../contracts/identity';
import { BadInputError } from '../contracts/errors';
import { DEFAULT_TASK_QUEUES } from '../names';
import { PACKAGE_ROOT } from '../package-root';

interface A2AOptions {
  host: string;
  port: string;
  publicUrl?: string;
  upstream: string[];
  registryId: string;
  taskQueue: string;
}

/** `--port`: an integer 0-65535 (0 picks a free port). */
export function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d{1,5}$/.test(value) || port > 65535)
    throw new BadInputError(`--port: expected a port number 0-65535, got ${JSON.stringify(value)}`);
  return port;
}

/** `--upstream amid=url`, repeatable: where each top-level agent's own A2A server is. */
export function parseUpstreams(values: readonly string[]): Map<string, string> {
  const upstreams = new Map<string, string>();
  for (const value of values) {
    const at = value.indexOf('=');
    const amid = value.slice(0, at);
    const url = value.slice(at + 1);
    if (at < 0 || !AmidSchema.safeParse(amid).success)
      throw new BadInputError(
        `--upstream: expected <amid>=<url> such as amid:<40 hex>=http://10.0.0.5:9000, got ${value}`,
      );
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
      throw new BadInputError(`--upstream ${amid}: expected an http(s) URL, got ${JSON.stringify(url)}`);
    if (upstreams.has(amid)) throw new BadInputError(`--upstream: ${amid} is given twice`);
    upstreams.set(amid, url);
  }
  return upstreams;
}

export function registerA2ACommand(program: Command): void {
  program
    .command('a2a')
    .description('serve A2A agent cards for the top-level agents of the circle registry; every message passes KNOCK')
    .option('--host <host>', 'listen address', '127.0.0.1')
    .option('--port <port>', 'listen port (0 picks a free one)', '8470')
    .option('--public-url <url>', 'base URL the cards name, e.g. behind a TLS proxy (default http://<host>:<port>)')
    .addOption(
      new Option('--upstream <amid=url>', "a top-level agent's own A2A server, repeatable")
        .argParser((value: string, previous: string[] = []) => [...previous, value])
        .default([]),
    )
    .addOption(
      new Option('--registry-id <id>', 'workflow id of the circle registry')
        .env('AGENT_JUDGE_CIRCLE_REGISTRY')
        .default(CIRCLE_REGISTRY_WORKFLOW_ID),
    )
    .addOption(
      new Option('--task-queue <name>', 'task queue the registry runs on if it has to be started').default(
        DEFAULT_TASK_QUEUES.workflow,
      ),
    )
    .action(async (opts: A2AOptions, cmd: Command) => {
      const port = parsePort(opts.port);
      const upstreams = parseUpstreams(opts.upstream);
      if (opts.publicUrl !== undefined && !URL.canParse(opts.publicUrl))
        throw new BadInputError(`--public-url: expected a URL, got ${JSON.stringify(opts.publicUrl)}`);
      const flags = cmd.optsWithGlobals<{ address?: string; namespace?: string }>();
      const { connectCheckedClient, temporalTarget } = await import('../client/connection');
      const target = temporalTarget({ address: flags.address, namespace: flags.namespace });
      const client = await connectCheckedClient(target, 'refusing to start, so no A2A message passes without a KNOCK');
      const registry = new CircleRegistryClient({ client, workflowId: opts.registryId, taskQueue: opts.taskQueue });
      const { startA2AFront } = await import('../a2a/front');
      const { upstreamExecutor } = await import('../a2a/upstream');
      const logger = (await import('./shared')).createLogger().child({ component: 'a2a' });
      const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: string };
      const front = await startA2AFront({
        registry,
        host: opts.host,
        port,
        ...(opts.publicUrl ? { publicUrl: opts.publicUrl } : {}),
        deliverTo: (amid) => {
          const url = upstreams.get(amid);
          return url ? upstreamExecutor(url) : undefined;
        },
        version: manifest.version ?? '0.0.0',
        logger,
      });
      logger.info({ url: front.url, cards: `${front.url}/agents`, upstreams: upstreams.size }, 'listening');
      await new Promise<void>((r) => {
        process.once('SIGINT', r);
        process.once('SIGTERM', r);
      });
      await front.close();
      await client.connection.close().catch(() => undefined);
    });
}
