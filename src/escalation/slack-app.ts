/**
 * The Slack app (@slack/bolt): turns a click on an escalation message into the `humanDecision` Update of exactly the
 * workflow the button names, only for a `slack:<id>` approver, and only while the proposal is waiting; the same
 * checks, quorum and answers as the Discord bot (decide.ts). It keeps no state: the workflow id is in the button.
 *
 * Two ways to hear the clicks: HTTP (Slack posts each interaction to the app's Request URL, signed with the app's
 * signing secret, which Bolt verifies: a bad signature is a 401 and nothing runs) or Socket Mode (the app opens a
 * WebSocket to Slack with an app-level token, for machines without a public URL). Every refused attempt is a
 * governance event.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { App, HTTPReceiver, SocketModeReceiver, type BlockAction } from '@slack/bolt';
import type { Client } from '@temporalio/client';
import type { Logger } from '../contracts/logger';
import type { KeyFile } from '../contracts/identity';
import type { CompliancePolicy } from '../contracts/policy';
import { onClick } from './slack-clicks';
import { slackInteraction, type SlackGovernanceEvent } from './slack-interaction';
import { slackLogger } from './slack-logger';
import { normalizeSlackApiUrl } from './slack-notifier';
import { onReasonSubmitted } from './slack-reason-form';

export interface SlackAppOptions {
  /** Bot token (`SLACK_BOT_TOKEN`, `xoxb-…`). */
  botToken: string;
  /** HTTP mode: the app's signing secret (`SLACK_SIGNING_SECRET`). */
  signingSecret?: string;
  /** Socket Mode: an app-level token with `connections:write` (`SLACK_APP_TOKEN`, `xapp-…`). Wins over HTTP. */
  appToken?: string;
  /** Web API base (`SLACK_API_URL`). */
  apiUrl?: string;
  /** HTTP mode: where to listen (default 127.0.0.1:3000); port 0 picks a free one. */
  port?: number;
  host?: string;
  /** Temporal client of the namespace the proposals run in. */
  client: Client;
  /** Approvers are the policy's `slack:<id>` entries (including AGENT_JUDGE_APPROVERS). */
  policy: CompliancePolicy;
  /** Required: the process's logger (a default of its own would hide refused clicks and failed actions). */
  logger: Logger;
  onGovernanceEvent?: (event: SlackGovernanceEvent) => void;
  /** A verified approver's decision is about to be sent (see DiscordBotOptions.onDecision). */
  onDecision?: (workflowId: string) => void;
  /**
   * The app's own key (`AGENT_JUDGE_SLACK_KEY` names the key file): it signs the decisions of the approvers it
   * verified, so the workflow can tell them from a forged `slack:<id>` claim when the policy sets
   * `escalation.slackBotKey`.
   */
  signingKey?: KeyFile;
}

export interface SlackApp {
  mode: 'http' | 'socket';
  /** HTTP mode: the URL Slack must post interactions to (`…/slack/events`). */
  url?: string;
  /** The bot's Slack user id. */
  userId: string;
  stop(): Promise<void>;
}

/** The path Bolt's HTTP receiver answers on: the app's Interactivity Request URL. */
export const SLACK_EVENTS_PATH = '/slack/events';

/** Starts the app and resolves once it listens (HTTP) or is connected (Socket Mode). */
export async function startSlackApp(opts: SlackAppOptions): Promise<SlackApp> {
  const log = opts.logger.child({ component: 'slack-app' });
  if (!opts.botToken) throw new Error('the Slack app needs a bot token (SLACK_BOT_TOKEN)');
  if (!opts.appToken && !opts.signingSecret)
    throw new Error('the Slack app needs SLACK_SIGNING_SECRET (HTTP) or SLACK_APP_TOKEN (Socket Mode)');
  const approvers = () => opts.policy.spec.escalation.approvers;
  const clientOptions = { slackApiUrl: normalizeSlackApiUrl(opts.apiUrl) };
  const logger = slackLogger(log);
  const mode: SlackApp['mode'] = opts.appToken ? 'socket' : 'http';
  const receiver = opts.appToken
    ? new SocketModeReceiver({ appToken: opts.appToken, logger, installerOptions: { clientOptions } })
    : new HTTPReceiver({
        signingSecret: opts.signingSecret as string,
        endpoints: [SLACK_EVENTS_PATH],
        logger,
        // Slack retries an interaction it got no answer to; the app acknowledges first and works after.
        processBeforeResponse: false,
      });
  const app = new App({ token: opts.botToken, receiver, clientOptions, logger });
  const auth = await app.client.auth.test();
  const self = { userId: auth.user_id ?? '', botId: auth.bot_id ?? '' };
  const ctx = slackInteraction({
    temporal: opts.client,
    signingKey: opts.signingKey,
    onDecision: opts.onDecision,
    onGovernanceEvent: opts.onGovernanceEvent,
    log,
    self,
    approvers,
  });

  app.action<BlockAction>({ type: 'block_actions' }, async ({ ack, body, action, client }) => {
    // Acknowledge first: Slack wants an answer within 3 seconds, the outcome comes as an edit or an ephemeral note.
    await ack();
    if (action.type !== 'button') {
      log.debug({ type: action.type }, 'ignoring an action the app does not handle');
      return;
    }
    await onClick(ctx, body, action, client).catch((err: unknown) =>
      log.error({ err, action_id: action.action_id }, 'click failed'),
    );
  });
  app.view({ type: 'view_submission' }, (args) =>
    onReasonSubmitted(ctx, args).catch((err: unknown) => log.error({ err }, 'reason form submission failed')),
  );
  app.error((err) => {
    log.error({ err }, 'slack app error');
    return Promise.resolve();
  });

  let url: string | undefined;
  if (mode === 'http') {
    const server = (await app.start({ port: opts.port ?? 3000, host: opts.host ?? '127.0.0.1' })) as Server;
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    url = `http://${host}:${address.port}${SLACK_EVENTS_PATH}`;
  } else {
    await app.start();
  }
  log.info(
    { mode, url, user_id: self.userId, approvers: approvers().filter((a) => a.startsWith('slack:')).length },
    `slack app ${mode === 'http' ? `listening on ${url}` : 'connected over Socket Mode'}`,
  );
  return {
    mode,
    ...(url ? { url } : {}),
    userId: self.userId,
    async stop() {
      await app.stop();
    },
  };
}
