/**
 * Who may decide through Discord (and, below, Slack). Approvers are policy entries `discord:<user id>`; the bot checks
 * them before it touches Temporal, and the workflow's Update validator checks again (the workflow
 * is the authority, the bot only refuses early and records the attempt).
 */

export const DISCORD_APPROVER_PREFIX = 'discord:';
/** Discord user ids are snowflakes: decimal, 17-20 digits today; accept a little either side. */
const SNOWFLAKE = /^[0-9]{15,25}$/;

export function isSnowflake(id: unknown): id is string {
  return typeof id === 'string' && SNOWFLAKE.test(id);
}

/** `discord:<id>` for a Discord user id; throws on anything that is not a snowflake. */
export function discordApproverId(userId: string): string {
  if (!isSnowflake(userId)) throw new Error(`not a Discord user id: ${JSON.stringify(userId).slice(0, 40)}`);
  return `${DISCORD_APPROVER_PREFIX}${userId}`;
}

/** The Discord user id in `discord:<id>`, or null for other approver ids (e.g. `scott`). */
export function discordUserIdOf(approver: string): string | null {
  if (!approver.startsWith(DISCORD_APPROVER_PREFIX)) return null;
  const id = approver.slice(DISCORD_APPROVER_PREFIX.length);
  return isSnowflake(id) ? id : null;
}

/** The Discord user ids among a list of approver ids, in order and without duplicates. */
export function discordUserIds(approvers: readonly string[]): string[] {
  const ids: string[] = [];
  for (const a of approvers) {
    const id = discordUserIdOf(a);
    if (id && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

/** True when the Discord user is listed as `discord:<id>`; exact match, no prefixes or globbing. */
export function isDiscordApprover(approvers: readonly string[], userId: unknown): boolean {
  if (!isSnowflake(userId)) return false;
  return approvers.includes(`${DISCORD_APPROVER_PREFIX}${userId}`);
}

/**
 * Slack approvers are policy entries `slack:<user id>`, checked the same way: by the Slack app before it touches
 * Temporal, and again by the workflow.
 */
export const SLACK_APPROVER_PREFIX = 'slack:';
/** Slack user ids: `U` (or `W` on Enterprise Grid) and uppercase letters and digits, e.g. `U024BE7LH`. */
const SLACK_USER_ID = /^[UW][A-Z0-9]{2,30}$/;

export function isSlackUserId(id: unknown): id is string {
  return typeof id === 'string' && SLACK_USER_ID.test(id);
}

/** `slack:<id>` for a Slack user id; throws on anything that is not one. */
export function slackApproverId(userId: string): string {
  if (!isSlackUserId(userId)) throw new Error(`not a Slack user id: ${JSON.stringify(userId).slice(0, 40)}`);
  return `${SLACK_APPROVER_PREFIX}${userId}`;
}

/** The Slack user id in `slack:<id>`, or null for other approver ids. */
export function slackUserIdOf(approver: string): string | null {
  if (!approver.startsWith(SLACK_APPROVER_PREFIX)) return null;
  const id = approver.slice(SLACK_APPROVER_PREFIX.length);
  return isSlackUserId(id) ? id : null;
}

/** The Slack user ids among a list of approver ids, in order and without duplicates. */
export function slackUserIds(approvers: readonly string[]): string[] {
  const ids: string[] = [];
  for (const a of approvers) {
    const id = slackUserIdOf(a);
    if (id && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

/** True when the Slack user is listed as `slack:<id>`; exact match. */
export function isSlackApprover(approvers: readonly string[], userId: unknown): boolean {
  if (!isSlackUserId(userId)) return false;
  return approvers.includes(`${SLACK_APPROVER_PREFIX}${userId}`);
}
