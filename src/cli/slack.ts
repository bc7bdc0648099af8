import { appendFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { type Command, Option } from 'commander';
import type { Logger } from '../contracts/logger';
import type { CompliancePolicy } from '../contracts/policy';
import { slackUserIds } from '../escalation/approvers';
import type { SlackApp } from '../escalation/slack-app';
import type { SlackGovernanceEvent } from '../escalation/slack-interaction';
import { BadInputError } from '../contracts/errors';
import { loadKeyFile } from '../identity/keys';
import { loadPolicyLayers } from '../policy/load';
import { DEFAULT_TASK_QUEUES } from '../names';
import { loadEnv } from '../config/env';
import { createLogger, untilSignal, withClient } from './shared';
import { processEnv } from '../config/process-env';

export interface SlackEnvOptions {
  client: Client;
  policy: CompliancePolicy;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /** HTTP mode: where to listen (default 127.0.0.1:3000). */
  port?: number;
  host?: string;
  /** Appends governance events (refused clicks) as JSON lines to this file. */
  governanceLog?: string;
  /** See SlackAppOptions.onDecision. */
  onDecision?: (workflowId: string) => void;
}

/**
 * Starts the Slack app when `SLACK_BOT_TOKEN` and `SLACK_APP_TOKEN` (Socket Mode) or `SLACK_SIGNING_SECRET` (HTTP)
 * are set; returns null and logs why when they are not, so `agent-judge dev` runs without Slack.
 */
export async function startSlackAppFromEnv(opts: SlackEnvOptions): Promise<SlackApp | null> {
  const env = opts.env ?? processEnv();
  const botToken = env.SLACK_BOT_TOKEN?.trim();
  const appToken = env.SLACK_APP_TOKEN?.trim() || undefined;
  const signingSecret = env.SLACK_SIGNING_SECRET?.trim() || undefined;
  if (!botToken) {
    opts.logger.info('Slack escalation is off: SLACK_BOT_TOKEN is not set (see docs/slack.md)');
    return null;
  }
  if (!appToken && !signingSecret) {
    opts.logger.warn(
      'SLACK_BOT_TOKEN is set but neither SLACK_SIGNING_SECRET (HTTP) nor SLACK_APP_TOKEN (Socket Mode): ' +
        'escalations are posted to Slack but clicks are not heard (see docs/slack.md)',
    );
    return null;
  }
  const approvers = slackUserIds(opts.policy.spec.escalation.approvers);
  if (approvers.length === 0) {
    opts.logger.warn(
      'the policy lists no slack:<user id> approvers: nobody can decide from Slack ' +
        '(add them to spec.escalation.approvers or AGENT_JUDGE_APPROVERS)',
    );
  }
  // The app signs the decisions it verified when it has a key; the policy's slackBotKey then makes the workflow
  // refuse unsigned `slack:<id>` claims from anyone else.
  const keyPath = env.AGENT_JUDGE_SLACK_KEY?.trim();
  const signingKey = keyPath ? await loadKeyFile(keyPath) : undefined;
  const botKey = opts.policy.spec.escalation.slackBotKey;
  if (botKey && !signingKey) {
    opts.logger.warn(
      'the policy sets escalation.slackBotKey but AGENT_JUDGE_SLACK_KEY is not set: Slack decisions will be refused',
    );
  } else if (signingKey && botKey && signingKey.public_key !== botKey) {
    opts.logger.warn('AGENT_JUDGE_SLACK_KEY does not match escalation.slackBotKey in the policy');
  }
  // Bolt is heavy: load it only when the app really starts.
  const { startSlackApp } = await import('../escalation/slack-app');
  const app = await startSlackApp({
    botToken,
    appToken,
    signingSecret,
    apiUrl: env.SLACK_API_URL?.trim() || undefined,
    port: opts.port,
    host: opts.host,
    client: opts.client,
    policy: opts.policy,
    logger: opts.logger,
    signingKey,
    ...(opts.onDecision ? { onDecision: opts.onDecision } : {}),
    onGovernanceEvent: opts.governanceLog
      ? (e: SlackGovernanceEvent) => appendFileSync(opts.governanceLog as string, `${JSON.stringify(e)}\n`)
      : undefined,
  });
  const where = env.SLACK_CHANNEL_ID?.trim() ? `channel ${env.SLACK_CHANNEL_ID.trim()}` : 'DMs to each approver';
  opts.logger.info(
    { bot_user_id: app.userId, approvers: approvers.length, mode: app.mode, url: app.url },
    `Slack app ${app.mode === 'socket' ? 'connected over Socket Mode' : `listening on ${app.url}`}; ` +
      `escalations go to ${where}`,
  );
  return app;
}

function parsePort(raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new BadInputError(`--port: "${raw}" is not a port (0-65535)`);
  return n;
}

/** `agent-judge slack`: the Slack app on its own (e.g. next to workers elsewhere). */
export function registerSlackCommand(program: Command): void {
  program
    .command('slack')
    .description(
      'run the Slack app: approvers decide escalated proposals with one click ' +
        '(needs SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET or SLACK_APP_TOKEN)',
    )
    .option(
      '--policy <file>',
      'CompliancePolicy YAML with the slack:<user id> approvers ' +
        '(default: $AGENT_JUDGE_POLICY or policies/default.yaml)',
    )
    .option('--port <port>', 'HTTP mode: port for Slack to post interactions to (default 3000)', parsePort)
    .option('--host <address>', 'HTTP mode: address to listen on (default 127.0.0.1; 0.0.0.0 for all)')
    .option(
      '--governance-log <file>',
      'also append governance events (refused or forged clicks) to this file as JSON lines',
    )
    .addHelpText(
      'after',
      '\nModes:\n' +
        '  HTTP         SLACK_SIGNING_SECRET set: Slack posts each click to http(s)://<host>/slack/events,\n' +
        '               signed with the secret; unsigned or wrongly signed requests get a 401\n' +
        '  Socket Mode  SLACK_APP_TOKEN set (wins): the app connects out to Slack; no public URL needed\n' +
        '\nEnvironment:\n' +
        '  SLACK_BOT_TOKEN       bot token, xoxb-... (required; the workers post with it too)\n' +
        '  SLACK_SIGNING_SECRET  signing secret of the app (HTTP mode)\n' +
        '  SLACK_APP_TOKEN       app-level token, xapp-..., with connections:write (Socket Mode)\n' +
        '  SLACK_CHANNEL_ID      post escalations to this channel instead of DMs (read by the workers)\n' +
        '  SLACK_API_URL         Web API base (default https://slack.com/api/)\n' +
        "  AGENT_JUDGE_SLACK_KEY key file the app signs decisions with (the policy's escalation.slackBotKey)\n" +
        '  AGENT_JUDGE_APPROVERS extra approvers, e.g. slack:U024BE7LH\n',
    )
    .addOption(
      new Option(
        '--log-format <format>',
        'logs on stderr: pretty or json (default: $LOG_FORMAT, else pretty on a terminal)',
      ).choices(['pretty', 'json']),
    )
    .action(
      async (
        opts: { policy?: string; port?: number; host?: string; governanceLog?: string; logFormat?: string },
        cmd: Command,
      ) => {
        const env = loadEnv();
        if (!env.SLACK_BOT_TOKEN) {
          throw new BadInputError(
            'SLACK_BOT_TOKEN is not set: create a Slack app, install it to the workspace and export its bot token ' +
              '(see docs/slack.md)',
          );
        }
        if (!env.SLACK_SIGNING_SECRET && !env.SLACK_APP_TOKEN) {
          throw new BadInputError(
            'set SLACK_SIGNING_SECRET (HTTP: Slack posts clicks to this app) or SLACK_APP_TOKEN (Socket Mode: no ' +
              'public URL needed); see docs/slack.md',
          );
        }
        const logger = createLogger({ env, format: opts.logFormat });
        const loaded = await loadPolicyLayers({ path: opts.policy ?? env.AGENT_JUDGE_POLICY });
        await withClient(cmd, async (client) => {
          // The app decides who may approve with its own policy; the workflow checks again with the workers'.
          const { PolicyWatch } = await import('../client/policy-in-force');
          const watch = new PolicyWatch({
            client,
            taskQueue: DEFAULT_TASK_QUEUES.workflow,
            mine: loaded.own,
            logger,
          });
          await watch.start();
          const app = await startSlackAppFromEnv({
            client,
            policy: loaded.policy,
            logger,
            port: opts.port,
            host: opts.host,
            governanceLog: opts.governanceLog,
            onDecision: (workflowId) => watch.onCall(`the decision on ${workflowId}`),
          });
          const sig = await untilSignal().done;
          logger.info(`${sig}: stopping the Slack app`);
          await app?.stop();
        });
      },
    );
}
