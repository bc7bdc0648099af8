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
import { App, HTTPReceiver, SocketModeReceiver, type BlockAction, type ButtonAction } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { Client } from '@temporalio/client';
import { pino, type Logger } from 'pino';
import type { KeyFile } from '../contracts/identity';
import type { CompliancePolicy } from '../contracts/policy';
import { isSlackApprover, slackApproverId } from './approvers';
import type { GovernanceEvent } from './bot';
import { parseButtonCustomId } from './custom-id';
import { decideFromChat, FORGED, NOT_AN_APPROVER, NOT_OURS } from './decide';
import type { OutcomeView } from './render';
import { slackLogger } from './slack-logger';
import { normalizeSlackApiUrl } from './slack-notifier';
import { BLOCK, renderSlackOutcome, SLACK_FORMAT, type SlackBlock } from './slack-render';

/** A refused or suspicious click, logged at warn with `event: "governance"`. */
export interface SlackGovernanceEvent {
  event: 'governance';
  kind: GovernanceEvent['kind'];
  at: string;
  slack_user_id: string;
  /** `slack:<id>` of the clicking user. */
  actor: string;
  workflow_id: string | null;
  /** The raw action_id, JSON-quoted and cut to 120 characters (it is untrusted). */
  action_id: string;
  team_id: string | null;
  channel_id: string | null;
  message_ts: string | null;
  detail: string;
}

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
  logger?: Logger;
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

/** True when the message is the bot's own and carries exactly this button in this workflow's actions block. */
function messageCarries(
  message: BlockAction['message'],
  self: { userId: string; botId: string },
  action: ButtonAction,
  workflowId: string,
): boolean {
  if (!message) return false;
  const own =
    (self.botId !== '' && message.bot_id === self.botId) || (self.userId !== '' && message.user === self.userId);
  if (!own || action.block_id !== BLOCK.actions(workflowId)) return false;
  const blocks = (message.blocks ?? []) as SlackBlock[];
  return blocks.some(
    (b) =>
      b.type === 'actions' &&
      b.block_id === action.block_id &&
      b.elements.some((e) => 'action_id' in e && e.action_id === action.action_id),
  );
}

/** Starts the app and resolves once it listens (HTTP) or is connected (Socket Mode). */
export async function startSlackApp(opts: SlackAppOptions): Promise<SlackApp> {
  const log = (opts.logger ?? pino({ level: 'info' }, pino.destination(2))).child({ component: 'slack-app' });
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

  function governance(
    body: BlockAction,
    kind: SlackGovernanceEvent['kind'],
    workflowId: string | null,
    actionId: string,
    detail: string,
  ): void {
    const event: SlackGovernanceEvent = {
      event: 'governance',
      kind,
      at: new Date().toISOString(),
      slack_user_id: body.user.id,
      actor: `slack:${body.user.id}`,
      workflow_id: workflowId,
      action_id: JSON.stringify(actionId).slice(0, 120),
      team_id: body.team?.id ?? null,
      channel_id: body.channel?.id ?? null,
      message_ts: body.message?.ts ?? null,
      detail,
    };
    log.warn(event, `governance: ${kind} by slack:${body.user.id}${workflowId ? ` on ${workflowId}` : ''}`);
    try {
      opts.onGovernanceEvent?.(event);
    } catch (err) {
      log.error({ err }, 'governance event hook failed');
    }
  }

  async function ephemeral(client: WebClient, body: BlockAction, text: string): Promise<void> {
    const channel = body.channel?.id;
    if (!channel) return;
    await client.chat
      .postEphemeral({ channel, user: body.user.id, text, parse: 'none', link_names: false })
      .catch((err: unknown) => log.warn({ err }, 'could not post an ephemeral answer'));
  }

  async function edit(client: WebClient, body: BlockAction, outcome: OutcomeView): Promise<void> {
    const channel = body.channel?.id;
    const ts = body.message?.ts;
    if (!channel || !ts) return;
    const message = renderSlackOutcome(body.message?.blocks as SlackBlock[] | undefined, outcome);
    await client.chat
      .update({ channel, ts, text: message.text, blocks: message.blocks, parse: 'none', link_names: false })
      .catch((err: unknown) => log.warn({ err }, 'could not update the escalation message'));
  }

  async function onClick(body: BlockAction, action: ButtonAction, client: WebClient): Promise<void> {
    const parsed = parseButtonCustomId(action.action_id);
    if (!parsed || parsed.action === 'reject_reason') {
      governance(body, 'malformed_interaction', null, action.action_id, 'action_id is not an agent-judge button');
      return ephemeral(client, body, NOT_OURS);
    }
    const { workflowId } = parsed;
    // The data must match a button the app itself put on this message.
    if (!messageCarries(body.message, self, action, workflowId)) {
      governance(body, 'forged_interaction', workflowId, action.action_id, 'the button does not match its message');
      return ephemeral(client, body, FORGED);
    }
    if (!isSlackApprover(approvers(), body.user.id)) {
      governance(body, 'unauthorized_click', workflowId, action.action_id, 'not a slack:<id> approver in the policy');
      return ephemeral(client, body, NOT_AN_APPROVER);
    }
    const result = await decideFromChat({
      client: opts.client,
      workflowId,
      approver: slackApproverId(body.user.id),
      via: 'slack',
      decision: parsed.action,
      signingKey: opts.signingKey,
      onDecision: opts.onDecision,
      format: SLACK_FORMAT,
      log,
    });
    if (result.kind === 'refused') {
      if (result.governance) governance(body, 'refused_by_workflow', workflowId, action.action_id, result.governance);
      return ephemeral(client, body, result.notice);
    }
    const s = result.status;
    const outcome = {
      workflow_id: workflowId,
      status: s.status,
      verdict: s.verdict,
      decisions: s.decisions,
      approvals_needed: s.approvals_needed,
    };
    if (result.kind === 'closed') {
      await ephemeral(client, body, result.notice);
      // Brings a stale message up to date (e.g. when the workflow could not edit it itself).
      const stale = ((body.message?.blocks ?? []) as SlackBlock[]).some((b) => b.type === 'actions');
      if (stale) await edit(client, body, outcome);
      return;
    }
    await edit(client, body, outcome);
  }

  app.action<BlockAction>({ type: 'block_actions' }, async ({ ack, body, action, client }) => {
    // Acknowledge first: Slack wants an answer within 3 seconds, the outcome comes as an edit or an ephemeral note.
    await ack();
    if (action.type !== 'button') {
      log.debug({ type: action.type }, 'ignoring an action the app does not handle');
      return;
    }
    await onClick(body, action, client).catch((err: unknown) =>
      log.error({ err, action_id: action.action_id }, 'click failed'),
    );
  });
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
