/**
 * Who may decide through Discord. Approvers are policy entries `discord:<user id>`; the bot checks
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
