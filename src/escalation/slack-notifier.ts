/**
 * Posts escalations to Slack over the Web API (@slack/web-api): a DM to each `slack:<id>` approver, or one message in
 * `SLACK_CHANNEL_ID`. Like the Discord notifier it keeps no state: where it posted is returned as AnnouncementRefs
 * that the workflow stores, and a retried activity finds its earlier post instead of posting again. Slack has no
 * nonce, so that search is the only guard: it reads the channel's recent history (`channels:history`,
 * `groups:history`, `im:history`) for the bot's own message whose block id names the workflow.
 */
import {
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebClient,
  type ChatPostMessageArguments,
  type ConversationsHistoryResponse,
} from '@slack/web-api';
import type { Logger } from '../contracts/logger';
import { BadInputError, DeliveryRefusedError } from '../contracts/errors';
import type { DecisionRecord } from '../contracts/status';
import { slackUserIds } from './approvers';
import { isProposalWorkflowId } from './custom-id';
import type {
  AnnouncementRef,
  EscalationNotice,
  EscalationNotifier,
  GrantNotice,
  ReminderNotice,
  ResolutionNotice,
  UncertainExecutionNotice,
} from './notifier';
import { slackLogger } from './slack-logger';
import {
  BLOCK,
  renderSlackEscalation,
  renderSlackGrant,
  renderSlackGrantEnded,
  renderSlackOutcome,
  renderSlackReminder,
  renderSlackUncertain,
  SLACK_FORMAT,
  slackUpdate,
  type SlackBlock,
  type SlackMessage,
} from './slack-render';
import { grantEndedText } from './chat-outcome';

export const SLACK_NOTIFIER_NAME = 'slack';
export const DEFAULT_SLACK_API = 'https://slack.com/api/';

/** Where one escalation message went; stored in workflow state so resolve() can edit it. */
export interface SlackAnnouncementRef extends AnnouncementRef {
  notifier: typeof SLACK_NOTIFIER_NAME;
  channel: string;
  /** The message's `ts`: its id within the channel. */
  ts: string;
  /** The approver a DM went to (`slack:<id>`); absent for a channel post. */
  recipient?: string;
}

export interface SlackNotifierOptions {
  /** Bot token (`SLACK_BOT_TOKEN`, `xoxb-…`). */
  token: string;
  /** Web API base, e.g. `http://127.0.0.1:PORT/api/` for a proxy or a test server (`SLACK_API_URL`). */
  apiUrl?: string;
  /** Post here instead of DMs (`SLACK_CHANNEL_ID`). */
  channelId?: string;
  /** Required: the process's logger (a default of its own would hide failed deliveries). */
  logger: Logger;
  /** Recent messages scanned for an earlier post of the same escalation (max 200). */
  scanLimit?: number;
  /** Web API request timeout in ms (default 15,000). */
  timeoutMs?: number;
  /** The web inbox's public URL (`AGENT_JUDGE_INBOX_URL`): each escalation links to its page there. */
  inboxUrl?: string;
}

/** Slack channel ids: `C` (public), `G` (private) or `D` (DM), then uppercase letters and digits. */
const CHANNEL_ID = /^[CGD][A-Z0-9]{2,30}$/;
const TS = /^\d{1,12}\.\d{1,8}$/;

export function isSlackChannelId(id: unknown): id is string {
  return typeof id === 'string' && CHANNEL_ID.test(id);
}

/** The Web API base with one trailing slash (@slack/web-api appends the method name). */
export function normalizeSlackApiUrl(apiUrl: string | undefined): string {
  const url = (apiUrl ?? DEFAULT_SLACK_API).trim().replace(/\/*$/, '/');
  if (!/^https?:\/\/[^\s]+$/.test(url)) throw new BadInputError(`SLACK_API_URL: "${url}" is not an http(s) URL`);
  return url;
}

/** Platform errors a retry fixes; any other `ok: false` answer will be given again. */
const TRANSIENT = new Set(['ratelimited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

export function isPermanentSlackError(err: unknown): boolean {
  return err instanceof WebAPIPlatformError && !TRANSIENT.has(err.data.error);
}

function describe(err: unknown): string {
  if (err instanceof WebAPIPlatformError) return `Slack refused: ${err.data.error}`;
  if (err instanceof WebAPIRateLimitedError) return `rate limited for ${err.retryAfter} s`;
  return err instanceof Error ? err.message : String(err);
}

function isSlackRef(ref: AnnouncementRef): ref is SlackAnnouncementRef {
  return ref.notifier === SLACK_NOTIFIER_NAME && isSlackChannelId(ref.channel) && TS.test(String(ref.ts));
}

interface SlackHistoryMessage {
  ts?: string;
  text?: string;
  user?: string;
  bot_id?: string;
  thread_ts?: string;
  blocks?: SlackBlock[];
}

/** The Web API as the notifier and the app use it: one client, with agent-judge's logger and timeouts. */
export function slackWebClient(token: string, apiUrl: string | undefined, log: Logger, timeoutMs = 15_000): WebClient {
  return new WebClient(token, {
    slackApiUrl: normalizeSlackApiUrl(apiUrl),
    logger: slackLogger(log),
    timeout: timeoutMs,
    // Temporal retries the activity; a few quick retries here cover a blip.
    retryConfig: { retries: 2, factor: 1.5, minTimeout: 200, maxTimeout: 2000 },
  });
}

/** Whether any of these blocks has this block id. */
export function hasBlock(blocks: readonly SlackBlock[] | undefined, blockId: string): boolean {
  return (blocks ?? []).some((b) => b.block_id === blockId);
}

/** The EscalationNotifier for Slack. */
export function createSlackNotifier(opts: SlackNotifierOptions): EscalationNotifier {
  if (!opts.token) throw new BadInputError('Slack notifier: a bot token is required (SLACK_BOT_TOKEN)');
  if (opts.channelId !== undefined && !isSlackChannelId(opts.channelId)) {
    throw new BadInputError(
      `SLACK_CHANNEL_ID: "${String(opts.channelId)}" is not a Slack channel id (C…, G… or D…, uppercase)`,
    );
  }
  const log = opts.logger.child({ notifier: SLACK_NOTIFIER_NAME });
  const web = slackWebClient(opts.token, opts.apiUrl, log, opts.timeoutMs);
  const scanLimit = Math.min(200, Math.max(1, opts.scanLimit ?? 100));

  let me: Promise<{ userId: string; botId: string }> | undefined;
  const self = () => {
    me ??= web.auth.test().then(
      (r) => ({ userId: r.user_id ?? '', botId: r.bot_id ?? '' }),
      (err: unknown) => {
        me = undefined;
        throw err;
      },
    );
    return me;
  };
  const isOwn = (m: SlackHistoryMessage, who: { userId: string; botId: string }) =>
    (who.botId !== '' && m.bot_id === who.botId) || (who.userId !== '' && m.user === who.userId);

  /** The bot's own recent message in `channel` (or in the thread of `threadTs`) with this block id. */
  async function findOwn(
    channel: string,
    blockId: string,
    threadTs?: string,
  ): Promise<SlackHistoryMessage | undefined> {
    try {
      const who = await self();
      const res: ConversationsHistoryResponse = threadTs
        ? await web.conversations.replies({ channel, ts: threadTs, limit: scanLimit })
        : await web.conversations.history({ channel, limit: scanLimit });
      const messages = (res.messages ?? []) as SlackHistoryMessage[];
      return messages.find((m) => isOwn(m, who) && m.ts !== threadTs && hasBlock(m.blocks, blockId));
    } catch (err) {
      // Without the history scopes nothing guards against a second post of a retried activity: say so.
      if (isPermanentSlackError(err)) {
        log.warn(
          { channel, error: describe(err) },
          'cannot read the channel history (add the channels:history, groups:history and im:history scopes): ' +
            'a retried notice may post twice',
        );
        return undefined;
      }
      throw err;
    }
  }

  /** Posts once per (workflow, channel, kind): an earlier post is found and returned instead. */
  async function postOnce(
    channel: string,
    blockId: string,
    message: SlackMessage,
    threadTs?: string,
  ): Promise<{ channel: string; ts: string }> {
    const earlier = await findOwn(channel, blockId, threadTs);
    if (earlier?.ts) {
      log.info({ channel, ts: earlier.ts, block_id: blockId }, 'already posted; not posting again');
      return { channel, ts: earlier.ts };
    }
    const args: ChatPostMessageArguments = {
      channel,
      text: message.text,
      blocks: message.blocks,
      // Nothing an agent wrote is turned into a mention, a channel ping or a preview.
      parse: 'none',
      link_names: false,
      unfurl_links: false,
      unfurl_media: false,
      ...(threadTs ? { thread_ts: threadTs } : {}),
    };
    const res = await web.chat.postMessage(args);
    if (!res.ts || !res.channel) throw new Error('Slack accepted the message but returned no ts/channel');
    return { channel: res.channel, ts: res.ts };
  }

  async function dmChannel(userId: string): Promise<string> {
    const res = await web.conversations.open({ users: userId });
    const id = res.channel?.id;
    if (!id) throw new Error(`Slack opened no DM for ${userId}`);
    return id;
  }

  return {
    name: SLACK_NOTIFIER_NAME,

    async announce(notice: EscalationNotice): Promise<AnnouncementRef[]> {
      if (!isProposalWorkflowId(notice.workflow_id))
        throw new BadInputError(`not a proposal workflow id: ${String(notice.workflow_id)}`);
      const message = renderSlackEscalation(notice, opts.inboxUrl);
      const targets: Array<{ recipient?: string; userId?: string }> = opts.channelId
        ? [{}]
        : slackUserIds(notice.approvers).map((id) => ({ recipient: `slack:${id}`, userId: id }));
      if (targets.length === 0) {
        log.warn(
          { workflow_id: notice.workflow_id },
          'no slack:<id> approvers and no SLACK_CHANNEL_ID: nothing posted to Slack',
        );
        return [];
      }
      const refs: SlackAnnouncementRef[] = [];
      const refused: string[] = [];
      for (const t of targets) {
        try {
          const channel = opts.channelId ?? (await dmChannel(t.userId as string));
          const posted = await postOnce(channel, BLOCK.escalation(notice.workflow_id), message);
          refs.push({
            notifier: SLACK_NOTIFIER_NAME,
            channel: posted.channel,
            ts: posted.ts,
            ...(t.recipient ? { recipient: t.recipient } : {}),
          });
        } catch (err) {
          if (!isPermanentSlackError(err)) throw err;
          // One approver Slack cannot reach must not block the others; a retry would fail the same way.
          refused.push(`${t.recipient ?? `channel ${opts.channelId}`}: ${describe(err)}`);
          log.warn(
            { workflow_id: notice.workflow_id, recipient: t.recipient, channel: opts.channelId, error: describe(err) },
            'Slack refused the escalation message',
          );
        }
      }
      if (refs.length === 0)
        throw new DeliveryRefusedError(`Slack refused every escalation message: ${refused.join('; ')}`);
      log.info({ workflow_id: notice.workflow_id, messages: refs.length }, 'escalation posted to Slack');
      return refs;
    },

    async remind(reminder: ReminderNotice): Promise<void> {
      const approved = new Set(
        reminder.approvals.filter((d: DecisionRecord) => d.decision === 'approve').map((d) => d.approver),
      );
      const pending = slackUserIds(reminder.notice.approvers).filter((id) => !approved.has(`slack:${id}`));
      for (const ref of reminder.refs.filter(isSlackRef)) {
        if (ref.recipient && approved.has(ref.recipient)) continue;
        // In a channel, mention the approvers who have not approved; a DM notifies on its own.
        const message = renderSlackReminder(reminder, ref.recipient ? [] : pending);
        try {
          await postOnce(ref.channel, BLOCK.reminder(reminder.notice.workflow_id), message, ref.ts);
        } catch (err) {
          if (!isPermanentSlackError(err)) throw err;
          log.warn(
            { workflow_id: reminder.notice.workflow_id, channel: ref.channel, error: describe(err) },
            'Slack refused the reminder',
          );
        }
      }
    },

    async uncertain(notice: UncertainExecutionNotice): Promise<void> {
      if (!isProposalWorkflowId(notice.workflow_id))
        throw new BadInputError(`not a proposal workflow id: ${String(notice.workflow_id)}`);
      const message = renderSlackUncertain(notice);
      const targets = opts.channelId ? [opts.channelId] : slackUserIds(notice.approvers);
      for (const target of targets) {
        try {
          const channel = opts.channelId ?? (await dmChannel(target));
          await postOnce(channel, BLOCK.uncertain(notice.workflow_id), message);
        } catch (err) {
          if (!isPermanentSlackError(err)) throw err;
          log.warn(
            { workflow_id: notice.workflow_id, target, error: describe(err) },
            'Slack refused the uncertain-execution message',
          );
        }
      }
    },

    async granted(grant: GrantNotice): Promise<void> {
      if (!isProposalWorkflowId(grant.origin_workflow_id)) return;
      const targets = opts.channelId
        ? [{ channel: opts.channelId }]
        : slackUserIds(grant.approvers).map((id) => ({ id }));
      for (const t of targets) {
        try {
          const channel = 'channel' in t ? t.channel : await dmChannel(t.id);
          // The decision's own edit (the outcome) comes first: wait for it, so the two edits do not undo each other.
          let found = await findOwn(channel, BLOCK.escalation(grant.origin_workflow_id));
          for (let i = 0; !grant.ended && found && !hasBlock(found.blocks, BLOCK.outcome) && i < 20; i += 1) {
            await new Promise((r) => setTimeout(r, 500));
            found = await findOwn(channel, BLOCK.escalation(grant.origin_workflow_id));
          }
          if (!found?.ts || !found.blocks) continue;
          const text = found.text ?? `Grant ${grant.grant_id}`;
          const message = grant.ended
            ? renderSlackGrantEnded(
                found.blocks,
                grant.grant_id,
                grantEndedText(grant.ended, grant.max_uses, SLACK_FORMAT),
                text,
              )
            : renderSlackGrant(found.blocks, grant, text);
          await web.chat.update(slackUpdate(channel, found.ts, message));
        } catch (err) {
          if (!isPermanentSlackError(err)) throw err;
          log.warn(
            { grant_id: grant.grant_id, workflow_id: grant.origin_workflow_id, error: describe(err) },
            'could not show the grant on the escalation message',
          );
        }
      }
    },

    async resolve(resolution: ResolutionNotice): Promise<void> {
      for (const ref of resolution.refs.filter(isSlackRef)) {
        try {
          // The original blocks, to keep the dispute under the outcome; without history, the outcome alone.
          const original = await web.conversations
            .history({ channel: ref.channel, latest: ref.ts, oldest: ref.ts, inclusive: true, limit: 1 })
            .then((r) => ((r.messages ?? []) as SlackHistoryMessage[]).find((m) => m.ts === ref.ts)?.blocks)
            .catch((err: unknown) => {
              if (isPermanentSlackError(err)) return undefined;
              throw err;
            });
          const message = renderSlackOutcome(original, {
            workflow_id: resolution.workflow_id,
            status: resolution.status,
            verdict: resolution.verdict,
            decisions: resolution.decisions,
          });
          // Editing is idempotent: a retried activity writes the same outcome again.
          await web.chat.update(slackUpdate(ref.channel, ref.ts, message));
        } catch (err) {
          if (!isPermanentSlackError(err)) throw err;
          log.warn(
            { workflow_id: resolution.workflow_id, channel: ref.channel, ts: ref.ts, error: describe(err) },
            'could not update the escalation message',
          );
        }
      }
    },
  };
}

/** The Slack notifier when `SLACK_BOT_TOKEN` is set (with `SLACK_API_URL` and `SLACK_CHANNEL_ID`), else none. */
export function createSlackNotifiersFromEnv(env: NodeJS.ProcessEnv, logger: Logger): EscalationNotifier[] {
  const token = env.SLACK_BOT_TOKEN?.trim();
  if (!token) return [];
  return [
    createSlackNotifier({
      token,
      apiUrl: env.SLACK_API_URL?.trim() || undefined,
      channelId: env.SLACK_CHANNEL_ID?.trim() || undefined,
      inboxUrl: env.AGENT_JUDGE_INBOX_URL?.trim() || undefined,
      logger,
    }),
  ];
}
