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
import {
  App,
  HTTPReceiver,
  SocketModeReceiver,
  type AllMiddlewareArgs,
  type BlockAction,
  type ButtonAction,
  type SlackViewMiddlewareArgs,
} from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { Logger } from '../contracts/logger';
import { z } from 'zod';
import type { KeyFile } from '../contracts/identity';
import type { CompliancePolicy } from '../contracts/policy';
import type { ProposalRecord } from '../contracts/status';
import { grantWorkflowId, revokeGrantUpdate, statusQuery } from '../names';
import { isSlackApprover, isSlackUserId, slackApproverId } from './approvers';
import type { GovernanceEvent } from './bot';
import {
  cleanReason,
  MAX_CUSTOM_ID_LENGTH,
  parseButtonCustomId,
  parseModalCustomId,
  parseRevokeGrantCustomId,
  REASON_INPUT_ID,
} from './custom-id';
import { closedNotice, decideFromChat, FORGED, isClosedError, NOT_AN_APPROVER, NOT_OURS } from './decide';
import { grantEndedText, type OutcomeView } from './chat-outcome';
import { describeTarget } from './proposal-summary';
import { slackLogger } from './slack-logger';
import { hasBlock, isSlackChannelId, normalizeSlackApiUrl } from './slack-notifier';
import {
  BLOCK,
  REASON_BLOCK_ID,
  renderSlackGrantEnded,
  renderSlackOutcome,
  renderSlackReasonModal,
  SLACK_FORMAT,
  slackUpdate,
  type SlackBlock,
} from './slack-render';

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

/** What a reason is refused with, inside the modal. */
export const REASON_NEEDED = 'A reason is needed to reject with a reason.';

const SlackUserId = z.string().refine(isSlackUserId, 'a Slack user id (U… or W…)');
const SlackChannelId = z.string().refine(isSlackChannelId, 'a Slack channel id (C…, G… or D…)');
const SlackTs = z.string().regex(/^\d{1,12}\.\d{1,8}$/, 'a Slack message ts');

/** The parts of a `block_actions` payload the app reads: checked before any of it is used (it is untrusted). */
const ClickBody = z.object({
  type: z.literal('block_actions'),
  user: z.object({ id: SlackUserId }),
  team: z.object({ id: z.string().max(40) }).nullish(),
  channel: z.object({ id: SlackChannelId }).optional(),
  message: z.object({ ts: SlackTs }).optional(),
  trigger_id: z.string().min(1).max(200),
});
const ClickAction = z.object({
  type: z.literal('button'),
  action_id: z.string().max(255),
  block_id: z.string().max(255),
});

/** The parts of a `view_submission` payload the app reads. */
const ViewSubmissionBody = z.object({
  type: z.literal('view_submission'),
  user: z.object({ id: SlackUserId }),
  team: z.object({ id: z.string().max(40) }).nullish(),
  view: z.object({
    callback_id: z.string().max(MAX_CUSTOM_ID_LENGTH * 2),
    private_metadata: z.string().max(3000),
    state: z.object({
      values: z.record(z.string(), z.record(z.string(), z.object({ value: z.string().max(4096).nullish() }))),
    }),
  }),
});

/** The app's own note in a modal's private_metadata: the message whose button opened it. */
const ModalNote = z.strictObject({ channel: SlackChannelId, ts: SlackTs });
type ModalNote = z.infer<typeof ModalNote>;

function parseModalNote(raw: string): ModalNote | null {
  try {
    const note = ModalNote.safeParse(JSON.parse(raw));
    return note.success ? note.data : null;
  } catch {
    return null;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms))),
  ]).finally(() => clearTimeout(timer));
}

/** Who did what, where: the fields a governance event names. */
interface Origin {
  userId: string;
  teamId: string | null;
  channelId: string | null;
  messageTs: string | null;
}

/** True when the message is the bot's own and carries exactly this button in the actions block it belongs in. */
function messageCarries(
  message: BlockAction['message'],
  self: { userId: string; botId: string },
  action: ButtonAction,
  blockId: string,
): boolean {
  if (!message) return false;
  const own =
    (self.botId !== '' && message.bot_id === self.botId) || (self.userId !== '' && message.user === self.userId);
  if (!own || action.block_id !== blockId) return false;
  const blocks = (message.blocks ?? []) as SlackBlock[];
  return blocks.some(
    (b) =>
      b.type === 'actions' &&
      b.block_id === action.block_id &&
      b.elements.some((e) => 'action_id' in e && e.action_id === action.action_id),
  );
}

function outcomeOf(workflowId: string, s: ProposalRecord): OutcomeView {
  return {
    workflow_id: workflowId,
    status: s.status,
    verdict: s.verdict,
    decisions: s.decisions,
    approvals_needed: s.approvals_needed,
  };
}

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

  function governance(
    origin: Origin,
    kind: SlackGovernanceEvent['kind'],
    workflowId: string | null,
    actionId: string,
    detail: string,
  ): void {
    const event: SlackGovernanceEvent = {
      event: 'governance',
      kind,
      at: new Date().toISOString(),
      slack_user_id: origin.userId,
      actor: `slack:${origin.userId}`,
      workflow_id: workflowId,
      action_id: JSON.stringify(actionId).slice(0, 120),
      team_id: origin.teamId,
      channel_id: origin.channelId,
      message_ts: origin.messageTs,
      detail,
    };
    log.warn(event, `governance: ${kind} by slack:${origin.userId}${workflowId ? ` on ${workflowId}` : ''}`);
    try {
      opts.onGovernanceEvent?.(event);
    } catch (err) {
      log.error({ err }, 'governance event hook failed');
    }
  }

  async function ephemeral(client: WebClient, origin: Origin, text: string): Promise<void> {
    if (!origin.channelId) return;
    await client.chat
      .postEphemeral({ channel: origin.channelId, user: origin.userId, text, parse: 'none', link_names: false })
      .catch((err: unknown) => log.warn({ err }, 'could not post an ephemeral answer'));
  }

  async function edit(client: WebClient, body: BlockAction, outcome: OutcomeView): Promise<void> {
    const channel = body.channel?.id;
    const ts = body.message?.ts;
    if (!channel || !ts) return;
    const message = renderSlackOutcome(body.message?.blocks as SlackBlock[] | undefined, outcome);
    await client.chat
      .update(slackUpdate(channel, ts, message))
      .catch((err: unknown) => log.warn({ err }, 'could not update the escalation message'));
  }

  /**
   * "Reject with reason": a quick look that the proposal still waits (a modal must open within the trigger's 3
   * seconds, so a slow Temporal opens it anyway: the submission is checked in full), then views.open.
   */
  async function openReasonModal(
    origin: Origin,
    triggerId: string,
    workflowId: string,
    client: WebClient,
  ): Promise<void> {
    const status = await withTimeout(
      opts.client.workflow
        .getHandle(workflowId)
        .query(statusQuery)
        .catch((err: unknown): 'gone' | 'timeout' => (isClosedError(err) ? 'gone' : 'timeout')),
      2000,
    );
    if (status === 'gone') return ephemeral(client, origin, 'This proposal no longer exists. Nothing was done.');
    if (status !== 'timeout' && status.stage !== 'awaiting_human')
      return ephemeral(client, origin, closedNotice(status, SLACK_FORMAT));
    if (!origin.channelId || !origin.messageTs) return ephemeral(client, origin, FORGED);
    const subject =
      status === 'timeout'
        ? `Reject ${workflowId}`
        : `Reject ${status.proposal.action_type} → ${describeTarget(status.proposal)} by ${status.proposal.agent_id}`;
    const note: ModalNote = { channel: origin.channelId, ts: origin.messageTs };
    await client.views
      .open({ trigger_id: triggerId, view: renderSlackReasonModal(workflowId, subject, JSON.stringify(note)) })
      .catch((err: unknown) => {
        log.warn({ err, workflow_id: workflowId }, 'could not open the reason form');
        return ephemeral(client, origin, 'The reason form could not be opened. Nothing was done; please try again.');
      });
  }

  async function onClick(body: BlockAction, action: ButtonAction, client: WebClient): Promise<void> {
    const checked = ClickBody.safeParse(body);
    const checkedAction = ClickAction.safeParse(action);
    if (!checked.success || !checkedAction.success) {
      log.warn(
        { event: 'governance', kind: 'malformed_interaction', issues: (checked.error ?? checkedAction.error)?.issues },
        'governance: a block_actions payload that is not what Slack sends; ignored',
      );
      return;
    }
    const b = checked.data;
    const origin: Origin = {
      userId: b.user.id,
      teamId: b.team?.id ?? null,
      channelId: b.channel?.id ?? null,
      messageTs: b.message?.ts ?? null,
    };
    const actionId = checkedAction.data.action_id;
    const revoke = parseRevokeGrantCustomId(actionId);
    if (revoke) return onRevokeGrant(body, origin, action, revoke.grantId, client);
    const parsed = parseButtonCustomId(actionId);
    if (!parsed) {
      governance(origin, 'malformed_interaction', null, actionId, 'action_id is not an agent-judge button');
      return ephemeral(client, origin, NOT_OURS);
    }
    const { workflowId } = parsed;
    // The data must match a button the app itself put on this message.
    if (!messageCarries(body.message, self, action, BLOCK.actions(workflowId))) {
      governance(origin, 'forged_interaction', workflowId, actionId, 'the button does not match its message');
      return ephemeral(client, origin, FORGED);
    }
    if (!isSlackApprover(approvers(), b.user.id)) {
      governance(origin, 'unauthorized_click', workflowId, actionId, 'not a slack:<id> approver in the policy');
      return ephemeral(client, origin, NOT_AN_APPROVER);
    }
    if (parsed.action === 'reject_reason') return openReasonModal(origin, b.trigger_id, workflowId, client);
    const result = await decideFromChat({
      client: opts.client,
      workflowId,
      approver: slackApproverId(b.user.id),
      via: 'slack',
      decision: parsed.action,
      signingKey: opts.signingKey,
      onDecision: opts.onDecision,
      format: SLACK_FORMAT,
      log,
    });
    if (result.kind === 'refused') {
      if (result.governance) governance(origin, 'refused_by_workflow', workflowId, actionId, result.governance);
      return ephemeral(client, origin, result.notice);
    }
    const outcome = outcomeOf(workflowId, result.status);
    if (result.kind === 'closed') {
      await ephemeral(client, origin, result.notice);
      // Brings a stale message up to date (e.g. when the workflow could not edit it itself).
      const stale = hasBlock(body.message?.blocks as SlackBlock[] | undefined, BLOCK.actions(workflowId));
      if (stale) await edit(client, body, outcome);
      return;
    }
    await edit(client, body, outcome);
  }

  /**
   * "Revoke grant" on the message of the proposal the grant was made for: the same checks as a decision (the app's
   * own button on this message, a listed approver), then the grant workflow's `revokeGrant` Update, which refuses a
   * grant that is no longer live. Revocation only takes power away: like `agent-judge grants revoke`, it is not signed;
   * `by` names the approver for the audit trail.
   */
  async function onRevokeGrant(
    body: BlockAction,
    origin: Origin,
    action: ButtonAction,
    grantId: string,
    client: WebClient,
  ): Promise<void> {
    const grantWorkflow = grantWorkflowId(grantId);
    if (!messageCarries(body.message, self, action, BLOCK.grantActions(grantId))) {
      governance(
        origin,
        'forged_interaction',
        grantWorkflow,
        action.action_id,
        'the button does not match its message',
      );
      return ephemeral(client, origin, FORGED);
    }
    if (!isSlackApprover(approvers(), origin.userId)) {
      governance(
        origin,
        'unauthorized_click',
        grantWorkflow,
        action.action_id,
        'not a slack:<id> approver in the policy',
      );
      return ephemeral(client, origin, NOT_AN_APPROVER);
    }
    const by = slackApproverId(origin.userId);
    let ended: string;
    try {
      const status = await opts.client.workflow
        .getHandle(grantWorkflow)
        .executeUpdate(revokeGrantUpdate, { args: [{ by, reason: 'revoked from Slack' }] });
      ended = grantEndedText(
        { state: 'revoked', uses: status.uses.length, by, at: status.revoked?.at ?? new Date().toISOString() },
        status.definition.max_uses,
        SLACK_FORMAT,
      );
      log.info({ event: 'grant.revoked', grant_id: grantId, by, via: 'slack' }, `grant ${grantId} revoked by ${by}`);
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError || isClosedError(err)) {
        // Revoked elsewhere, expired or used up: say so, and bring the message up to date.
        const why = err instanceof WorkflowUpdateFailedError ? (err.cause?.message ?? err.message) : 'it has ended';
        await ephemeral(client, origin, `This grant is no longer live (${why.slice(0, 200)}). Nothing was done.`);
        ended = 'no longer live';
      } else {
        log.error({ err, grant_id: grantId }, 'revokeGrant update failed');
        return ephemeral(client, origin, 'agent-judge could not revoke the grant. Nothing was done; please try again.');
      }
    }
    const channel = origin.channelId;
    const ts = origin.messageTs;
    if (!channel || !ts) return;
    const blocks = (body.message?.blocks ?? []) as SlackBlock[];
    const message = renderSlackGrantEnded(blocks, grantId, ended, body.message?.text ?? `Grant ${grantId}`);
    await client.chat
      .update(slackUpdate(channel, ts, message))
      .catch((e: unknown) => log.warn({ err: e }, 'could not update the message after revoking the grant'));
  }

  /**
   * The reason form was submitted. Checked again in full (payload, workflow, approver, reason); a refusal the user
   * can fix shows in the form, anything else closes it and answers with a note only they see in the message's
   * conversation. A recorded reject is final: the workflow edits every copy of the message itself.
   */
  async function onReasonSubmitted({ ack, body, client }: SlackViewMiddlewareArgs & AllMiddlewareArgs): Promise<void> {
    const checked = ViewSubmissionBody.safeParse(body);
    if (!checked.success) {
      log.warn(
        { event: 'governance', kind: 'malformed_interaction', issues: checked.error.issues },
        'governance: a view_submission payload that is not what Slack sends; ignored',
      );
      return ack();
    }
    const b = checked.data;
    const modal = parseModalCustomId(b.view.callback_id);
    const note = parseModalNote(b.view.private_metadata);
    const origin: Origin = {
      userId: b.user.id,
      teamId: b.team?.id ?? null,
      channelId: note?.channel ?? null,
      messageTs: note?.ts ?? null,
    };
    const refuseInForm = (text: string) =>
      ack({ response_action: 'errors', errors: { [REASON_BLOCK_ID]: text.slice(0, 150) } });
    if (!modal || !note) {
      governance(origin, 'malformed_interaction', null, b.view.callback_id, 'not an agent-judge reason form');
      return refuseInForm(NOT_OURS);
    }
    const { workflowId } = modal;
    if (!isSlackApprover(approvers(), b.user.id)) {
      governance(
        origin,
        'unauthorized_click',
        workflowId,
        b.view.callback_id,
        'not a slack:<id> approver in the policy',
      );
      return refuseInForm(NOT_AN_APPROVER);
    }
    const reason = cleanReason(b.view.state.values[REASON_BLOCK_ID]?.[REASON_INPUT_ID]?.value);
    if (!reason) return refuseInForm(REASON_NEEDED);
    // Closes the form within Slack's 3 seconds; the outcome comes as an edit or a note.
    await ack();
    const result = await decideFromChat({
      client: opts.client,
      workflowId,
      approver: slackApproverId(b.user.id),
      via: 'slack',
      decision: 'reject',
      reason,
      signingKey: opts.signingKey,
      onDecision: opts.onDecision,
      format: SLACK_FORMAT,
      log,
    });
    if (result.kind === 'refused') {
      if (result.governance)
        governance(origin, 'refused_by_workflow', workflowId, b.view.callback_id, result.governance);
      return ephemeral(client, origin, result.notice);
    }
    if (result.kind === 'closed') return ephemeral(client, origin, result.notice);
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
  app.view({ type: 'view_submission' }, (args) =>
    onReasonSubmitted(args).catch((err: unknown) => log.error({ err }, 'reason form submission failed')),
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
