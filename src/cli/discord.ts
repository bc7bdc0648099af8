import { appendFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { type Command, Option } from 'commander';
import type { Logger } from '../contracts/logger';
import type { CompliancePolicy } from '../contracts/policy';
import { discordUserIds } from '../escalation/approvers';
import type { DiscordBot, GovernanceEvent } from '../escalation/bot';
import { BadInputError } from '../contracts/errors';
import { loadKeyFile } from '../identity/keys';
import { loadPolicyLayers } from '../policy/load';
import { DEFAULT_TASK_QUEUES } from '../names';
import { loadEnv } from '../config/env';
import { createLogger, untilSignal, withClient } from './shared';
import { processEnv } from '../config/process-env';

export interface DiscordEnvOptions {
  client: Client;
  policy: CompliancePolicy;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /** Appends governance events (refused clicks) as JSON lines to this file. */
  governanceLog?: string;
  /** See DiscordBotOptions.onDecision. */
  onDecision?: (workflowId: string) => void;
}

/**
 * Starts the bot when `DISCORD_TOKEN` is set (with `DISCORD_API_URL`); returns null and logs why
 * when it is not, so `agent-judge dev` can run without Discord (the CLI `decide` still works).
 */
export async function startDiscordBotFromEnv(opts: DiscordEnvOptions): Promise<DiscordBot | null> {
  const env = opts.env ?? processEnv();
  const token = env.DISCORD_TOKEN?.trim();
  if (!token) {
    opts.logger.info(
      'Discord escalation is off: DISCORD_TOKEN is not set (agent-judge decide still works; see docs/discord.md)',
    );
    return null;
  }
  const approvers = discordUserIds(opts.policy.spec.escalation.approvers);
  if (approvers.length === 0) {
    opts.logger.warn(
      'the policy lists no discord:<user id> approvers: nobody can decide from Discord ' +
        '(add them to spec.escalation.approvers or AGENT_JUDGE_APPROVERS)',
    );
  }
  // The bot signs the decisions it verified when it has a key; the policy's discordBotKey then
  // makes the workflow refuse unsigned `discord:<id>` claims from anyone else.
  const keyPath = env.AGENT_JUDGE_DISCORD_KEY?.trim();
  const signingKey = keyPath ? await loadKeyFile(keyPath) : undefined;
  if (opts.policy.spec.escalation.discordBotKey && !signingKey) {
    opts.logger.warn(
      'the policy sets escalation.discordBotKey but AGENT_JUDGE_DISCORD_KEY is not set: ' +
        'Discord decisions will be refused',
    );
  } else if (
    signingKey &&
    opts.policy.spec.escalation.discordBotKey &&
    signingKey.public_key !== opts.policy.spec.escalation.discordBotKey
  ) {
    opts.logger.warn('AGENT_JUDGE_DISCORD_KEY does not match escalation.discordBotKey in the policy');
  }
  // discord.js is heavy: load it only when the bot really starts.
  const { startDiscordBot } = await import('../escalation/bot');
  const bot = await startDiscordBot({
    token,
    apiUrl: env.DISCORD_API_URL?.trim() || undefined,
    client: opts.client,
    policy: opts.policy,
    logger: opts.logger,
    signingKey,
    ...(opts.onDecision ? { onDecision: opts.onDecision } : {}),
    onGovernanceEvent: opts.governanceLog
      ? (e: GovernanceEvent) => appendFileSync(opts.governanceLog as string, `${JSON.stringify(e)}\n`)
      : undefined,
  });
  const where = env.DISCORD_CHANNEL_ID?.trim() ? `channel ${env.DISCORD_CHANNEL_ID.trim()}` : 'DMs to each approver';
  opts.logger.info(
    { bot_user_id: bot.userId, approvers: approvers.length },
    `Discord escalation bot connected; escalations go to ${where}`,
  );
  return bot;
}

/** `agent-judge discord`: the escalation bot on its own (e.g. next to workers elsewhere). */
export function registerDiscordCommand(program: Command): void {
  program
    .command('discord')
    .description(
      'run the Discord escalation bot: approvers decide escalated proposals with one click (needs DISCORD_TOKEN)',
    )
    .option(
      '--policy <file>',
      'CompliancePolicy YAML with the discord:<user id> approvers ' +
        '(default: $AGENT_JUDGE_POLICY or policies/default.yaml)',
    )
    .option(
      '--governance-log <file>',
      'also append governance events (refused or forged clicks) to this file as JSON lines',
    )
    .addHelpText(
      'after',
      '\nEnvironment:\n' +
        '  DISCORD_TOKEN       bot token (required)\n' +
        '  DISCORD_API_URL     REST base, e.g. http://127.0.0.1:PORT/api (default https://discord.com/api)\n' +
        '  DISCORD_CHANNEL_ID  post escalations to this channel instead of DMs (read by the workers)\n' +
        '  AGENT_JUDGE_APPROVERS  extra approvers, e.g. discord:123456789012345678\n',
    )
    .addOption(
      new Option(
        '--log-format <format>',
        'logs on stderr: pretty or json (default: $LOG_FORMAT, else pretty on a terminal)',
      ).choices(['pretty', 'json']),
    )
    .action(async (opts: { policy?: string; governanceLog?: string; logFormat?: string }, cmd: Command) => {
      const env = loadEnv();
      if (!env.DISCORD_TOKEN) {
        throw new BadInputError(
          'DISCORD_TOKEN is not set: create a bot in the Discord developer portal and export its token ' +
            '(see docs/discord.md)',
        );
      }
      const logger = createLogger({ env, format: opts.logFormat });
      const loaded = await loadPolicyLayers({ path: opts.policy ?? env.AGENT_JUDGE_POLICY });
      await withClient(cmd, async (client) => {
        // The bot decides who may approve with its own policy; the workflow checks again with the workers'. Said at
        // start, and on every decision while the two differ.
        const { PolicyWatch } = await import('../client/policy-in-force');
        const watch = new PolicyWatch({
          client,
          taskQueue: DEFAULT_TASK_QUEUES.workflow,
          mine: loaded.own,
          logger,
        });
        await watch.start();
        const bot = await startDiscordBotFromEnv({
          client,
          policy: loaded.policy,
          logger,
          governanceLog: opts.governanceLog,
          onDecision: (workflowId) => watch.onCall(`the decision on ${workflowId}`),
        });
        const sig = await untilSignal().done;
        logger.info(`${sig}: stopping the Discord bot`);
        await bot?.stop();
      });
    });
}
