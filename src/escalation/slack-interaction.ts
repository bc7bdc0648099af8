/**
 * What every handler of a Slack interaction (a click, a submitted form) shares: the app's own identity, the policy's
 * approvers, the Temporal client, and the two ways it answers besides the message itself: a governance event for a
 * refused or suspicious attempt, and a note only the clicking user sees.
 */
import type { BlockAction, ButtonAction } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { Client } from '@temporalio/client';
import type { KeyFile } from '../contracts/identity';
import type { Logger } from '../contracts/logger';
import type { GovernanceEvent } from './bot';
import type { SlackBlock } from './slack-render';

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

/** Who did what, where: the fields a governance event names. */
export interface Origin {
  userId: string;
  teamId: string | null;
  channelId: string | null;
  messageTs: string | null;
}

/** What the handlers of one app share; made once at start by {@link slackInteraction}. */
export interface SlackInteraction {
  /** Temporal client of the namespace the proposals run in. */
  temporal: Client;
  /** The app's own key: it signs the decisions of the approvers it verified (see SlackAppOptions.signingKey). */
  signingKey?: KeyFile;
  /** A verified approver's decision is about to be sent. */
  onDecision?: (workflowId: string) => void;
  log: Logger;
  /** The bot's own user and bot ids: a button counts only on a message the bot posted. */
  self: { userId: string; botId: string };
  /** The policy's approvers, read at each interaction. */
  approvers(): readonly string[];
  /** Logs a refused or suspicious attempt at warn, and hands it to the `onGovernanceEvent` hook. */
  governance(
    origin: Origin,
    kind: SlackGovernanceEvent['kind'],
    workflowId: string | null,
    actionId: string,
    detail: string,
  ): void;
  /** A note only the clicking user sees, in the conversation of the message (none without one). */
  ephemeral(client: WebClient, origin: Origin, text: string): Promise<void>;
}

/** The handlers' shared context, with the governance and ephemeral answers made from the app's logger and hook. */
export function slackInteraction(
  base: Omit<SlackInteraction, 'governance' | 'ephemeral'> & {
    onGovernanceEvent?: (event: SlackGovernanceEvent) => void;
  },
): SlackInteraction {
  const { log, onGovernanceEvent, ...rest } = base;
  return {
    ...rest,
    log,
    governance(
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
        onGovernanceEvent?.(event);
      } catch (err) {
        log.error({ err }, 'governance event hook failed');
      }
    },
    async ephemeral(client: WebClient, origin: Origin, text: string): Promise<void> {
      if (!origin.channelId) return;
      await client.chat
        .postEphemeral({ channel: origin.channelId, user: origin.userId, text, parse: 'none', link_names: false })
        .catch((err: unknown) => log.warn({ err }, 'could not post an ephemeral answer'));
    },
  };
}

/** True when the message is the bot's own and carries exactly this button in the actions block it belongs in. */
export function messageCarries(
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
