/**
 * Posts escalations to Discord over REST (no gateway): a DM to each `discord:<id>` approver, or
 * one message in `DISCORD_CHANNEL_ID`. It keeps no state: where it posted is returned as
 * AnnouncementRefs that the workflow stores, and a retried activity finds its earlier post
 * instead of posting again.
 */
import { createHash } from 'node:crypto';
import { DiscordAPIError, REST, Routes, type APIChannel, type APIMessage, type APIUser } from 'discord.js';
import type { Logger } from '../contracts/logger';
import type { DecisionRecord } from '../contracts/status';
import { BadInputError, DeliveryRefusedError } from '../contracts/errors';
import { discordUserIds, isSnowflake } from './approvers';
import { buttonCustomId, isProposalWorkflowId } from './custom-id';
import type {
  AnnouncementRef,
  EscalationNotice,
  EscalationNotifier,
  GrantNotice,
  ReminderNotice,
  ResolutionNotice,
  UncertainExecutionNotice,
} from './notifier';
import { DISCORD_FORMAT, grantEndedText } from './chat-outcome';
import { FIELD } from './discord-embed';
import {
  renderEscalation,
  renderGrant,
  renderGrantEnded,
  renderOutcome,
  renderReminder,
  renderUncertainExecution,
  UNCERTAIN_HEADLINE,
  type MessagePayload,
} from './render';

export const DISCORD_NOTIFIER_NAME = 'discord';
export const DEFAULT_DISCORD_API = 'https://discord.com/api';

/** Where one escalation message went; stored in workflow state so resolve() can edit it. */
export interface DiscordAnnouncementRef extends AnnouncementRef {
  notifier: typeof DISCORD_NOTIFIER_NAME;
  channel_id: string;
  message_id: string;
  /** The approver a DM went to (`discord:<id>`); absent for a channel post. */
  recipient?: string;
}

export interface DiscordNotifierOptions {
  /** Bot token (`DISCORD_TOKEN`). */
  token: string;
  /** REST base, e.g. `http://127.0.0.1:PORT/api` for a proxy or a test gateway (`DISCORD_API_URL`). */
  apiUrl?: string;
  /** Post here instead of DMs (`DISCORD_CHANNEL_ID`). */
  channelId?: string;
  /** Required: the process's logger (a default of its own would hide failed deliveries). */
  logger: Logger;
  /** Recent messages scanned for an earlier post of the same escalation (max 100). */
  scanLimit?: number;
  /** REST request timeout in ms (default 15,000). */
  timeoutMs?: number;
  /** The web inbox's public URL (`AGENT_JUDGE_INBOX_URL`): each escalation links to its page there. */
  inboxUrl?: string;
}

/** Delivery failed for a reason a retry will not fix (no approver reachable, bad channel, bad token). */
export class DiscordDeliveryError extends DeliveryRefusedError {}

/** The REST base without a trailing slash (discord.js appends `/v10/...`). */
export function normalizeApiUrl(apiUrl: string | undefined): string {
  const url = (apiUrl ?? DEFAULT_DISCORD_API).trim().replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s]+$/.test(url)) throw new BadInputError(`DISCORD_API_URL: "${url}" is not an http(s) URL`);
  return url;
}

function isPermanent(err: unknown): boolean {
  // 4xx other than rate limits will fail again (closed DMs, missing access, unknown channel).
  return err instanceof DiscordAPIError && err.status >= 400 && err.status < 500 && err.status !== 429;
}

function describe(err: unknown): string {
  if (err instanceof DiscordAPIError) return `${err.status} ${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** What a post is; one post of each kind per workflow and channel. */
type PostKind = 'announce' | 'remind' | 'uncertain';

/**
 * Discord's `nonce` is at most 25 characters; with `enforce_nonce` Discord returns the earlier
 * message instead of creating a second one when the same nonce comes back within a few minutes.
 */
export function nonceFor(workflowId: string, channelId: string, kind: PostKind): string {
  return createHash('sha256').update(`${kind}\0${workflowId}\0${channelId}`).digest('hex').slice(0, 25);
}

function isDiscordRef(ref: AnnouncementRef): ref is DiscordAnnouncementRef {
  return ref.notifier === DISCORD_NOTIFIER_NAME && isSnowflake(ref.channel_id) && isSnowflake(ref.message_id);
}

/** Does this message carry the escalation of `workflowId` (footer or buttons)? */
function carriesWorkflow(msg: APIMessage, workflowId: string): boolean {
  if (msg.message_reference) return false;
  const footer = msg.embeds?.[0]?.footer?.text ?? '';
  if (footer === workflowId || footer.startsWith(`${workflowId} `)) return true;
  const approve = buttonCustomId('approve', workflowId);
  return JSON.stringify(msg.components ?? []).includes(`"${approve}"`);
}

/** The EscalationNotifier for Discord. */
export function createDiscordNotifier(opts: DiscordNotifierOptions): EscalationNotifier {
  if (!opts.token) throw new BadInputError('Discord notifier: a bot token is required (DISCORD_TOKEN)');
  if (opts.channelId !== undefined && !isSnowflake(opts.channelId)) {
    throw new BadInputError(`DISCORD_CHANNEL_ID: "${String(opts.channelId)}" is not a Discord channel id`);
  }
  const log = opts.logger.child({ notifier: DISCORD_NOTIFIER_NAME });
  const rest = new REST({
    api: normalizeApiUrl(opts.apiUrl),
    version: '10',
    timeout: opts.timeoutMs ?? 15_000,
  }).setToken(opts.token);
  const scanLimit = Math.min(100, Math.max(1, opts.scanLimit ?? 100));

  let me: Promise<APIUser> | undefined;
  const botUser = (): Promise<APIUser> => {
    me ??= (rest.get(Routes.user('@me')) as Promise<APIUser>).catch((err) => {
      me = undefined;
      throw err;
    });
    return me;
  };

  /** The bot's own recent message in `channelId` matching `predicate`, if the channel can be read. */
  async function findOwn(channelId: string, predicate: (m: APIMessage) => boolean): Promise<APIMessage | undefined> {
    try {
      const [self, recent] = await Promise.all([
        botUser(),
        rest.get(Routes.channelMessages(channelId), {
          query: new URLSearchParams({ limit: String(scanLimit) }),
        }) as Promise<APIMessage[]>,
      ]);
      return recent.find((m) => m.author?.id === self.id && predicate(m));
    } catch (err) {
      // Without Read Message History the nonce alone guards against duplicates.
      if (isPermanent(err)) {
        log.debug({ channel_id: channelId, error: describe(err) }, 'cannot scan channel history; relying on the nonce');
        return undefined;
      }
      throw err;
    }
  }

  /** Posts once per (workflow, channel, kind): an earlier post is found and returned instead. */
  async function postOnce(
    channelId: string,
    workflowId: string,
    kind: PostKind,
    payload: Partial<MessagePayload> & { message_reference?: unknown },
    isEarlier: (m: APIMessage) => boolean,
  ): Promise<APIMessage> {
    const earlier = await findOwn(channelId, isEarlier);
    if (earlier) {
      log.info(
        { workflow_id: workflowId, channel_id: channelId, message_id: earlier.id, kind },
        'already posted; not posting again',
      );
      return earlier;
    }
    return (await rest.post(Routes.channelMessages(channelId), {
      body: { ...payload, nonce: nonceFor(workflowId, channelId, kind), enforce_nonce: true },
    })) as APIMessage;
  }

  async function dmChannel(userId: string): Promise<string> {
    const channel = (await rest.post(Routes.userChannels(), { body: { recipient_id: userId } })) as APIChannel;
    return channel.id;
  }

  return {
    name: DISCORD_NOTIFIER_NAME,

    async announce(notice: EscalationNotice): Promise<AnnouncementRef[]> {
      if (!isProposalWorkflowId(notice.workflow_id))
        throw new BadInputError(`not a proposal workflow id: ${String(notice.workflow_id)}`);
      const payload = renderEscalation(notice, [], opts.inboxUrl);
      const targets: Array<{ recipient?: string; userId?: string }> = opts.channelId
        ? [{}]
        : discordUserIds(notice.approvers).map((id) => ({ recipient: `discord:${id}`, userId: id }));
      if (targets.length === 0) {
        log.warn(
          { workflow_id: notice.workflow_id },
          'no discord:<id> approvers and no DISCORD_CHANNEL_ID: nothing posted to Discord',
        );
        return [];
      }
      const refs: DiscordAnnouncementRef[] = [];
      const refused: string[] = [];
      for (const t of targets) {
        try {
          const channelId = opts.channelId ?? (await dmChannel(t.userId as string));
          const msg = await postOnce(channelId, notice.workflow_id, 'announce', payload, (m) =>
            carriesWorkflow(m, notice.workflow_id),
          );
          refs.push({
            notifier: DISCORD_NOTIFIER_NAME,
            channel_id: channelId,
            message_id: msg.id,
            ...(t.recipient ? { recipient: t.recipient } : {}),
          });
        } catch (err) {
          if (!isPermanent(err)) throw err;
          // One approver with closed DMs must not block the others; the retry would fail the same way.
          refused.push(`${t.recipient ?? `channel ${opts.channelId}`}: ${describe(err)}`);
          log.warn(
            {
              workflow_id: notice.workflow_id,
              recipient: t.recipient,
              channel_id: opts.channelId,
              error: describe(err),
            },
            'Discord refused the escalation message',
          );
        }
      }
      if (refs.length === 0)
        throw new DiscordDeliveryError(`Discord refused every escalation message: ${refused.join('; ')}`);
      log.info({ workflow_id: notice.workflow_id, messages: refs.length }, 'escalation posted to Discord');
      return refs;
    },

    async remind(reminder: ReminderNotice): Promise<void> {
      const approved = new Set(
        reminder.approvals.filter((d: DecisionRecord) => d.decision === 'approve').map((d) => d.approver),
      );
      const pending = discordUserIds(reminder.notice.approvers).filter((id) => !approved.has(`discord:${id}`));
      for (const ref of reminder.refs.filter(isDiscordRef)) {
        if (ref.recipient && approved.has(ref.recipient)) continue;
        // In a channel, ping the approvers who have not approved; a DM notifies on its own.
        const { content, allowed_mentions } = renderReminder(reminder, ref.recipient ? [] : pending);
        try {
          await postOnce(
            ref.channel_id,
            reminder.notice.workflow_id,
            'remind',
            {
              content,
              allowed_mentions,
              message_reference: { message_id: ref.message_id, channel_id: ref.channel_id, fail_if_not_exists: false },
            },
            (m) => m.message_reference?.message_id === ref.message_id,
          );
        } catch (err) {
          if (!isPermanent(err)) throw err;
          log.warn(
            { workflow_id: reminder.notice.workflow_id, channel_id: ref.channel_id, error: describe(err) },
            'Discord refused the reminder',
          );
        }
      }
    },

    async uncertain(notice: UncertainExecutionNotice): Promise<void> {
      if (!isProposalWorkflowId(notice.workflow_id))
        throw new BadInputError(`not a proposal workflow id: ${String(notice.workflow_id)}`);
      const payload = renderUncertainExecution(notice);
      const channels = opts.channelId ? [opts.channelId] : discordUserIds(notice.approvers);
      for (const target of channels) {
        try {
          const channelId = opts.channelId ?? (await dmChannel(target));
          await postOnce(
            channelId,
            notice.workflow_id,
            'uncertain',
            payload,
            (m) => m.content.startsWith(UNCERTAIN_HEADLINE) && carriesWorkflow(m, notice.workflow_id),
          );
        } catch (err) {
          if (!isPermanent(err)) throw err;
          log.warn(
            { workflow_id: notice.workflow_id, target, error: describe(err) },
            'Discord refused the uncertain-execution message',
          );
        }
      }
    },

    async granted(grant: GrantNotice): Promise<void> {
      if (!isProposalWorkflowId(grant.origin_workflow_id)) return;
      const wf = grant.origin_workflow_id;
      const isEscalation = (m: APIMessage) => !m.content.startsWith(UNCERTAIN_HEADLINE) && carriesWorkflow(m, wf);
      const decided = (m: APIMessage | undefined) => !!m?.embeds?.[0]?.fields?.some((f) => f.name === FIELD.outcome);
      const targets = opts.channelId
        ? [{ channel: opts.channelId }]
        : discordUserIds(grant.approvers).map((id) => ({ id }));
      for (const t of targets) {
        try {
          const channelId = 'channel' in t ? t.channel : await dmChannel(t.id);
          // The decision's own edit (the outcome, which removes every button) comes first: wait for it.
          let found = await findOwn(channelId, isEscalation);
          for (let i = 0; !grant.ended && found && !decided(found) && i < 20; i += 1) {
            await new Promise((r) => setTimeout(r, 500));
            found = await findOwn(channelId, isEscalation);
          }
          const embed = found?.embeds?.[0];
          if (!found || !embed || !decided(found)) continue;
          await rest.patch(Routes.channelMessage(channelId, found.id), {
            body: grant.ended
              ? renderGrantEnded(
                  embed,
                  found.content,
                  grant.grant_id,
                  grantEndedText(grant.ended, grant.max_uses, DISCORD_FORMAT),
                )
              : renderGrant(embed, found.content, grant),
          });
        } catch (err) {
          if (!isPermanent(err)) throw err;
          log.warn(
            { grant_id: grant.grant_id, workflow_id: wf, error: describe(err) },
            'could not show the grant on the escalation message',
          );
        }
      }
    },

    async resolve(resolution: ResolutionNotice): Promise<void> {
      for (const ref of resolution.refs.filter(isDiscordRef)) {
        try {
          const original = (await rest.get(Routes.channelMessage(ref.channel_id, ref.message_id))) as APIMessage;
          const payload = renderOutcome(original.embeds?.[0], {
            workflow_id: resolution.workflow_id,
            status: resolution.status,
            verdict: resolution.verdict,
            decisions: resolution.decisions,
          });
          // Editing is idempotent: a retried activity writes the same outcome again.
          await rest.patch(Routes.channelMessage(ref.channel_id, ref.message_id), { body: payload });
        } catch (err) {
          if (!isPermanent(err)) throw err;
          log.warn(
            { workflow_id: resolution.workflow_id, message_id: ref.message_id, error: describe(err) },
            'could not update the escalation message',
          );
        }
      }
    },
  };
}

/**
 * The Discord notifier when `DISCORD_TOKEN` is set (with `DISCORD_API_URL` and `DISCORD_CHANNEL_ID`), else none.
 * Every channel's: src/escalation/notifiers.ts.
 */
export function createDiscordNotifiersFromEnv(env: NodeJS.ProcessEnv, logger: Logger): EscalationNotifier[] {
  const token = env.DISCORD_TOKEN?.trim();
  if (!token) return [];
  return [
    createDiscordNotifier({
      token,
      apiUrl: env.DISCORD_API_URL?.trim() || undefined,
      channelId: env.DISCORD_CHANNEL_ID?.trim() || undefined,
      inboxUrl: env.AGENT_JUDGE_INBOX_URL?.trim() || undefined,
      logger,
    }),
  ];
}
