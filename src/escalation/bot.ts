/**
 * The escalation bot: turns a click on an escalation message into the `humanDecision` Update of
 * exactly the workflow the button names, and only for an approver, and only while the proposal
 * is waiting. It keeps no state: the workflow id is in the button, the rest is in Temporal, so a
 * restarted bot picks up every pending escalation. Every refused attempt is a governance event.
 */
import {
  Client as DiscordClient,
  Events,
  GatewayIntentBits,
  MessageFlags,
  Routes,
  type ButtonInteraction,
  type Interaction,
  type Message,
  type ModalSubmitInteraction,
} from 'discord.js';
import type { Client } from '@temporalio/client';
import type { Logger } from '../contracts/logger';
import type { KeyFile } from '../contracts/identity';
import type { HumanDecision } from '../contracts/messages';
import type { CompliancePolicy } from '../contracts/policy';
import type { ProposalRecord } from '../contracts/status';
import { grantWorkflowId, statusQuery } from '../names';
import { discordApproverId, isDiscordApprover } from './approvers';
import {
  buttonCustomId,
  cleanReason,
  parseButtonCustomId,
  parseModalCustomId,
  parseRevokeGrantCustomId,
  REASON_INPUT_ID,
} from './custom-id';
import { closedNotice, decideFromChat, FORGED, isClosedError, NOT_AN_APPROVER, NOT_OURS } from './decide';
import { normalizeApiUrl } from './discord-notifier';
import { DISCORD_FORMAT } from './chat-outcome';
import { revokeFromChat } from './grant-revoke';
import { renderGrantEnded, renderOutcome, renderReasonModal, type MessagePayload } from './render';

/** A refused or suspicious interaction, logged at warn with `event: "governance"`. */
export interface GovernanceEvent {
  event: 'governance';
  kind: 'unauthorized_click' | 'malformed_interaction' | 'forged_interaction' | 'refused_by_workflow';
  at: string;
  discord_user_id: string;
  /** `discord:<id>` of the clicking user. */
  actor: string;
  workflow_id: string | null;
  /** The raw custom_id, JSON-quoted and cut to 120 characters (it is untrusted). */
  custom_id: string;
  interaction_id: string;
  channel_id: string | null;
  message_id: string | null;
  guild_id: string | null;
  detail: string;
}

export interface DiscordBotOptions {
  /** Bot token (`DISCORD_TOKEN`). */
  token: string;
  /** REST base (`DISCORD_API_URL`); the gateway address comes from `GET /gateway/bot` there. */
  apiUrl?: string;
  /** Temporal client of the namespace the proposals run in. */
  client: Client;
  /** Approvers are the policy's `discord:<id>` entries (including AGENT_JUDGE_APPROVERS). */
  policy: CompliancePolicy;
  /** Required: the process's logger (a default of its own would hide refused clicks and failed interactions). */
  logger: Logger;
  /** Called for each governance event after it is logged (e.g. to append to an audit file). */
  onGovernanceEvent?: (event: GovernanceEvent) => void;
  /**
   * A verified approver's decision is about to be sent: `agent-judge discord` repeats its warning here while the
   * bot's policy differs from the workers' (src/client/policy-in-force.ts).
   */
  onDecision?: (workflowId: string) => void;
  /**
   * The bot's own key (`AGENT_JUDGE_DISCORD_KEY` names the key file): it signs the decisions of
   * the approvers it verified, so the workflow can tell them from a forged `discord:<id>` claim
   * when the policy sets `escalation.discordBotKey`.
   */
  signingKey?: KeyFile;
  /** Defer the interaction when Temporal has not answered within this many ms (default 1,500). */
  deferAfterMs?: number;
  /** How long to wait for the gateway READY (default 30 s). */
  readyTimeoutMs?: number;
}

export interface DiscordBot {
  /** The bot's Discord user id. */
  userId: string;
  stop(): Promise<void>;
}

const EPHEMERAL = MessageFlags.Ephemeral;

type Answerable = ButtonInteraction | ModalSubmitInteraction;

/**
 * Answers within Discord's 3-second window: the final answer when Temporal is quick, else a
 * deferral (type 6) first and the answer as an edit or follow-up after it.
 */
class Responder {
  private deferral: Promise<unknown> | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly interaction: Answerable,
    deferAfterMs: number,
    private readonly log: Logger,
  ) {
    this.timer = setTimeout(() => {
      this.deferral = interaction
        .deferUpdate()
        .catch((err: unknown) => this.log.error({ err }, 'could not defer the interaction'));
    }, deferAfterMs);
  }

  private async deferred(): Promise<boolean> {
    clearTimeout(this.timer);
    if (!this.deferral) return false;
    await this.deferral;
    return true;
  }

  /** Replaces the clicked message (outcome, progress). */
  async update(payload: MessagePayload): Promise<void> {
    const body = {
      content: payload.content,
      embeds: payload.embeds,
      components: payload.components,
      allowedMentions: { parse: [] },
    };
    if (await this.deferred()) await this.interaction.editReply(body);
    else if (this.interaction.isButton()) await this.interaction.update(body);
    // A modal opened from a message can update that message (discord.js types this only on
    // ModalMessageModalSubmitInteraction); the bot refuses modals that did not come from one.
    else if (this.interaction.isFromMessage()) await this.interaction.update(body);
    else await this.interaction.reply({ ...body, flags: EPHEMERAL });
  }

  /** A notice only the clicking user sees. */
  async ephemeral(content: string): Promise<void> {
    const body = { content, flags: EPHEMERAL, allowedMentions: { parse: [] } } as const;
    if (await this.deferred()) await this.interaction.followUp(body);
    else await this.interaction.reply(body);
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms))),
  ]).finally(() => clearTimeout(timer));
}

/**
 * True when the message is the bot's own and is the escalation of this workflow: it carries
 * exactly this button, or (once closed, without buttons) the workflow id in its footer.
 */
function messageCarries(
  message: Message | null | undefined,
  botUserId: string,
  customId: string,
  workflowId: string,
): boolean {
  if (!message || !botUserId || message.author?.id !== botUserId) return false;
  const footer = message.embeds[0]?.footer?.text ?? '';
  if (footer.startsWith(`${workflowId} `)) return true;
  return message.components.some((row) =>
    JSON.stringify(row.toJSON()).includes(`"custom_id":${JSON.stringify(customId)}`),
  );
}

/** Starts the bot and resolves once it is connected to the gateway. */
export async function startDiscordBot(opts: DiscordBotOptions): Promise<DiscordBot> {
  const log = opts.logger.child({ component: 'discord-bot' });
  const deferAfterMs = opts.deferAfterMs ?? 1500;
  const approvers = () => opts.policy.spec.escalation.approvers;
  const discord = new DiscordClient({
    intents: [GatewayIntentBits.Guilds],
    rest: { api: normalizeApiUrl(opts.apiUrl) },
    // Nothing the bot writes may ping anyone; the renderers set this too.
    allowedMentions: { parse: [] },
  });

  const botUserId = () => discord.user?.id ?? '';

  function governance(i: Answerable, kind: GovernanceEvent['kind'], workflowId: string | null, detail: string): void {
    const event: GovernanceEvent = {
      event: 'governance',
      kind,
      at: new Date().toISOString(),
      discord_user_id: i.user.id,
      actor: `discord:${i.user.id}`,
      workflow_id: workflowId,
      custom_id: JSON.stringify(i.customId).slice(0, 120),
      interaction_id: i.id,
      channel_id: i.channelId ?? null,
      message_id: i.message?.id ?? null,
      guild_id: i.guildId ?? null,
      detail,
    };
    log.warn(event, `governance: ${kind} by discord:${i.user.id}${workflowId ? ` on ${workflowId}` : ''}`);
    try {
      opts.onGovernanceEvent?.(event);
    } catch (err) {
      log.error({ err }, 'governance event hook failed');
    }
  }

  async function refuse(i: Answerable, content: string): Promise<void> {
    await i.reply({ content, flags: EPHEMERAL, allowedMentions: { parse: [] } });
  }

  /** The checks every interaction passes before anything reaches Temporal. */
  async function admit(i: Answerable, workflowId: string | null, boundTo: string | null): Promise<boolean> {
    if (workflowId === null) {
      governance(i, 'malformed_interaction', null, 'custom_id is not an agent-judge button');
      await refuse(i, NOT_OURS);
      return false;
    }
    // The data must match a button the bot itself put on this message: a forged custom_id on
    // another message cannot redirect a click to a different proposal.
    if (boundTo === null || !messageCarries(i.message, botUserId(), boundTo, workflowId)) {
      governance(i, 'forged_interaction', workflowId, 'the button data does not match the message it came from');
      await refuse(i, FORGED);
      return false;
    }
    if (!isDiscordApprover(approvers(), i.user.id)) {
      governance(i, 'unauthorized_click', workflowId, 'not a discord:<id> approver in the policy');
      await refuse(i, NOT_AN_APPROVER);
      return false;
    }
    return true;
  }

  /** Brings a stale message up to date (e.g. when the workflow could not edit it itself). */
  async function refreshMessage(i: Answerable, record: ProposalRecord): Promise<void> {
    if (!i.message || !i.channelId || i.message.components.length === 0) return;
    const payload = renderOutcome(i.message.embeds[0]?.toJSON(), {
      workflow_id: record.workflow_id,
      status: record.status,
      verdict: record.verdict,
      decisions: record.decisions,
      approvals_needed: record.approvals_needed,
    });
    await discord.rest
      .patch(Routes.channelMessage(i.channelId, i.message.id), { body: payload })
      .catch((err: unknown) => log.warn({ err }, 'could not refresh a stale escalation message'));
  }

  async function decide(
    i: Answerable,
    workflowId: string,
    decision: HumanDecision['decision'],
    reason: string | undefined,
  ): Promise<void> {
    const respond = new Responder(i, deferAfterMs, log);
    const result = await decideFromChat({
      client: opts.client,
      workflowId,
      approver: discordApproverId(i.user.id),
      via: 'discord',
      decision,
      reason,
      signingKey: opts.signingKey,
      onDecision: opts.onDecision,
      log,
    });
    if (result.kind === 'refused') {
      if (result.governance) governance(i, 'refused_by_workflow', workflowId, result.governance);
      return respond.ephemeral(result.notice);
    }
    if (result.kind === 'closed') {
      await respond.ephemeral(result.notice);
      await refreshMessage(i, result.status);
      return;
    }
    const after = result.status;
    await respond.update(
      renderOutcome(i.message?.embeds[0]?.toJSON(), {
        workflow_id: workflowId,
        status: after.status,
        verdict: after.verdict,
        decisions: after.decisions,
        approvals_needed: after.approvals_needed,
      }),
    );
  }

  /**
   * "Revoke grant" on the message of the proposal the grant was made for: the bot's own button on this message, a
   * listed approver, then the revocation (src/escalation/grant-revoke.ts), which a grant no longer live refuses.
   */
  async function onRevokeGrant(i: ButtonInteraction, grantId: string): Promise<void> {
    const grantWorkflow = grantWorkflowId(grantId);
    const own = !!i.message && i.message.author?.id === botUserId() && botUserId() !== '';
    const carries =
      own &&
      i.message.components.some((row) =>
        JSON.stringify(row.toJSON()).includes(`"custom_id":${JSON.stringify(i.customId)}`),
      );
    if (!carries) {
      governance(i, 'forged_interaction', grantWorkflow, 'the button data does not match the message it came from');
      return refuse(i, FORGED);
    }
    if (!isDiscordApprover(approvers(), i.user.id)) {
      governance(i, 'unauthorized_click', grantWorkflow, 'not a discord:<id> approver in the policy');
      return refuse(i, NOT_AN_APPROVER);
    }
    const by = discordApproverId(i.user.id);
    const respond = new Responder(i, deferAfterMs, log);
    const embed = i.message.embeds[0]?.toJSON() ?? {};
    const result = await revokeFromChat(opts.client, grantId, by, 'Discord', DISCORD_FORMAT, log);
    if ('failed' in result) return respond.ephemeral(result.failed);
    const { ended, notice } = result;
    if (notice !== undefined) {
      await respond.ephemeral(notice);
      if (i.channelId)
        await discord.rest
          .patch(Routes.channelMessage(i.channelId, i.message.id), {
            body: renderGrantEnded(embed, i.message.content, grantId, ended),
          })
          .catch((e: unknown) => log.warn({ err: e }, 'could not refresh the grant on the message'));
      return;
    }
    await respond.update(renderGrantEnded(embed, i.message.content, grantId, ended));
  }

  async function onButton(i: ButtonInteraction): Promise<void> {
    const revoke = parseRevokeGrantCustomId(i.customId);
    if (revoke) return onRevokeGrant(i, revoke.grantId);
    const parsed = parseButtonCustomId(i.customId);
    if (!(await admit(i, parsed?.workflowId ?? null, parsed ? i.customId : null)) || !parsed) return;
    if (parsed.action !== 'reject_reason') return decide(i, parsed.workflowId, parsed.action, undefined);

    // A modal must be the first answer, so check quickly and open it anyway if Temporal is slow:
    // the submit is checked again in full.
    const status = await withTimeout(
      opts.client.workflow
        .getHandle(parsed.workflowId)
        .query(statusQuery)
        .catch((err: unknown) => (isClosedError(err) ? ('gone' as const) : ('timeout' as const))),
      Math.min(deferAfterMs, 2000),
    );
    if (status === 'gone') return refuse(i, 'This proposal no longer exists. Nothing was done.');
    if (status !== 'timeout' && status.stage !== 'awaiting_human') return refuse(i, closedNotice(status));
    await i.showModal(renderReasonModal(parsed.workflowId));
  }

  async function onModal(i: ModalSubmitInteraction): Promise<void> {
    const parsed = parseModalCustomId(i.customId);
    // The modal is bound to the message whose "Reject with reason" button opened it.
    const bound = parsed ? buttonCustomId('reject_reason', parsed.workflowId) : null;
    if (!(await admit(i, parsed?.workflowId ?? null, bound)) || !parsed) return;
    let raw: unknown;
    try {
      raw = i.fields.getTextInputValue(REASON_INPUT_ID);
    } catch {
      raw = undefined;
    }
    const reason = cleanReason(raw);
    if (!reason) return refuse(i, 'A reason is needed to reject with a reason. Nothing was done.');
    return decide(i, parsed.workflowId, 'reject', reason);
  }

  async function onInteraction(i: Interaction): Promise<void> {
    if (i.isButton()) return onButton(i);
    if (i.isModalSubmit()) return onModal(i);
    log.debug({ type: i.type, id: i.id }, 'ignoring an interaction the bot does not handle');
  }

  discord.on(Events.InteractionCreate, (i) => {
    onInteraction(i).catch((err: unknown) => log.error({ err, interaction_id: i.id }, 'interaction failed'));
  });
  discord.on(Events.Error, (err) => log.error({ err }, 'discord client error'));
  discord.on(Events.ShardDisconnect, (ev, shard) => log.warn({ code: ev.code, shard }, 'gateway disconnected'));

  let readyTimer: NodeJS.Timeout | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    readyTimer = setTimeout(
      () => reject(new Error('Discord gateway: no READY within the timeout')),
      opts.readyTimeoutMs ?? 30_000,
    );
    discord.once(Events.ClientReady, () => resolve());
  });
  try {
    await discord.login(opts.token);
    await ready;
  } catch (err) {
    await discord.destroy();
    throw err;
  } finally {
    clearTimeout(readyTimer);
    ready.catch(() => {});
  }
  log.info(
    { user_id: botUserId(), approvers: approvers().filter((a) => a.startsWith('discord:')).length },
    'discord bot connected',
  );

  return {
    userId: botUserId(),
    async stop() {
      await discord.destroy();
    },
  };
}
