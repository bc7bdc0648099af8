/**
 * `agent-judge inbox` (the web approval inbox, docs/inbox.md) and `agent-judge inbox invite` (an enrolment link for
 * one approver). The server lives in src/inbox/; this wires flags, the policy, the client and Ctrl-C.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import { Option, type Command } from 'commander';
import { loadEnv } from '../config/env';
import { BadInputError } from '../contracts/errors';
import type { Logger } from '../contracts/logger';
import type { CompliancePolicy } from '../contracts/policy';
import { InviteStore } from '../inbox/invites';
import { inviteLink, relyingPartyOf, startInbox, type InboxServer } from '../inbox/server';
import { DEFAULT_POLICY_PATH, loadPolicy } from '../policy/load';
import { createLogger, globalTarget, parseDuration, untilSignal } from './shared';
import { connectClient, temporalTarget } from '../client/connection';
import { taskQueuesFor } from '../names';

/** Where the inbox keeps its invites, and the URL it last served on (for `inbox invite`). */
export const DEFAULT_INBOX_STATE_DIR = '.agent-judge/inbox';
/** The registry file when AGENT_JUDGE_PASSKEYS is unset (the one `dev`'s workflow worker reads). */
export const DEFAULT_PASSKEYS_PATH = '.agent-judge/passkeys.json';
export const DEFAULT_INBOX_PORT = 8787;

interface InboxFlags {
  host: string;
  port: string;
  publicUrl?: string;
  policy?: string;
  passkeys?: string;
  stateDir: string;
  taskQueuePrefix?: string;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new BadInputError(`--port: expected 0-65535, got ${value}`);
  return port;
}

/** Starts the inbox and records its URL in the state folder, so `inbox invite` prints links to it. */
export async function serveInbox(input: {
  client: Client;
  policy: CompliancePolicy;
  registryPath: string;
  stateDir: string;
  host?: string;
  port?: number;
  publicUrl?: string;
  taskQueue?: string;
  logger: Logger;
}): Promise<InboxServer> {
  const inbox = await startInbox(input);
  mkdirSync(input.stateDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(input.stateDir, 'url'), `${inbox.url}\n`);
  return inbox;
}

/** The URL an invite links to: `--public-url`, else the one the running inbox recorded, else the default port's. */
function invitePublicUrl(flag: string | undefined, stateDir: string): string {
  if (flag) return flag;
  try {
    return readFileSync(join(stateDir, 'url'), 'utf8').trim();
  } catch {
    return `http://localhost:${DEFAULT_INBOX_PORT}`;
  }
}

export function registerInboxCommands(program: Command): void {
  const inbox = program
    .command('inbox')
    .description('run the web approval inbox: approvers enrol a passkey by invite, sign in, and sign their decisions')
    .addOption(new Option('--host <address>', 'address to listen on').default('127.0.0.1'))
    .addOption(new Option('--port <port>', 'port to listen on (0: any free port)').default(String(DEFAULT_INBOX_PORT)))
    .option(
      '--public-url <url>',
      'the URL people open (its origin is the WebAuthn origin, its host the rp id; default http://localhost:<port>)',
    )
    .option('--policy <file>', 'CompliancePolicy YAML (default: $AGENT_JUDGE_POLICY or policies/default.yaml)')
    .option('--passkeys <file>', `passkey registry file (default: $AGENT_JUDGE_PASSKEYS or ${DEFAULT_PASSKEYS_PATH})`)
    .addOption(new Option('--state-dir <dir>', 'where invites are kept').default(DEFAULT_INBOX_STATE_DIR))
    .option(
      '--task-queue-prefix <name>',
      "the workers' task queue prefix: only their proposals are listed (default agent-judge)",
    )
    .action(async (opts: InboxFlags, cmd: Command) => {
      const env = loadEnv();
      if (opts.publicUrl) relyingPartyOf(opts.publicUrl);
      const policy = await loadPolicy({ path: resolve(opts.policy ?? env.AGENT_JUDGE_POLICY ?? DEFAULT_POLICY_PATH) });
      const client = await connectClient(temporalTarget(globalTarget(cmd)));
      const server = await serveInbox({
        client,
        policy,
        registryPath: resolve(opts.passkeys ?? env.AGENT_JUDGE_PASSKEYS ?? DEFAULT_PASSKEYS_PATH),
        stateDir: resolve(opts.stateDir),
        host: opts.host,
        port: parsePort(opts.port),
        publicUrl: opts.publicUrl,
        taskQueue: taskQueuesFor(opts.taskQueuePrefix).workflow,
        logger: createLogger({ env }).child({ component: 'inbox' }),
      });
      process.stdout.write(
        `inbox       ${server.url} (approvers: ${policy.spec.escalation.approvers.join(', ') || 'none listed'}); ` +
          'agent-judge inbox invite --approver <id>\nstop        Ctrl-C\n',
      );
      await untilSignal().done;
      await server.close();
      await client.connection.close();
    });

  // --public-url, --policy and --state-dir are the inbox command's own: commander reads a parent's options after the
  // subcommand too, so `inbox invite --state-dir x` sets the parent's, read here through optsWithGlobals.
  inbox
    .command('invite')
    .description(
      'print a one-time, expiring link that enrols a passkey for one approver the policy lists ' +
        '(--public-url, --policy and --state-dir as for inbox; the link goes to the URL the running inbox recorded)',
    )
    .requiredOption('--approver <id>', 'the approver (listed in spec.escalation.approvers)')
    .addOption(new Option('--expires <duration>', 'how long the link works (at most 30d)').default('24h'))
    .action(async (_local: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<{
        approver: string;
        expires: string;
        publicUrl?: string;
        policy?: string;
        stateDir: string;
      }>();
      const env = loadEnv();
      // One running system, one truth: the approvers the workers accept and dev's inbox, unless told otherwise.
      const { approversInForce, given, runningDev } = await import('./running-system');
      const dev = runningDev();
      const policyPath = opts.policy ?? env.AGENT_JUDGE_POLICY;
      const inForce = policyPath === undefined && dev ? await approversInForce(cmd, dev.task_queue) : null;
      const { approvers, source } = inForce ?? {
        approvers: (await loadPolicy({ path: resolve(policyPath ?? DEFAULT_POLICY_PATH) })).spec.escalation.approvers,
        source: "the policy's spec.escalation.approvers",
      };
      if (!approvers.includes(opts.approver))
        throw new BadInputError(
          `--approver: ${opts.approver} is not listed in ${source} (${approvers.join(', ') || 'none listed'})`,
        );
      const ttl = parseDuration(opts.expires, '--expires');
      const devInbox = !given(cmd, 'stateDir') ? dev?.inbox : undefined;
      const stateDir = devInbox ? devInbox.state_dir : resolve(opts.stateDir);
      const url = opts.publicUrl ?? devInbox?.url ?? invitePublicUrl(undefined, stateDir);
      relyingPartyOf(url);
      const { token, invite } = new InviteStore(join(stateDir, 'invites')).create(opts.approver, ttl);
      process.stdout.write(
        `${inviteLink(url, token)}\n` +
          `enrols one passkey for ${invite.approver}; works once, until ${invite.expires_at}\n`,
      );
    });
}
