/**
 * The notifiers configured by the environment: Discord when `DISCORD_TOKEN` is set, Slack when `SLACK_BOT_TOKEN` is
 * set (both may be), else none; the caller says so when it is empty. The Slack client is loaded only when it is used.
 */
import type { Logger } from '../contracts/logger';
import { createDiscordNotifiersFromEnv } from './discord-notifier';
import type { EscalationNotifier } from './notifier';

export async function createNotifiersFromEnv(env: NodeJS.ProcessEnv, logger: Logger): Promise<EscalationNotifier[]> {
  const notifiers = createDiscordNotifiersFromEnv(env, logger);
  if (env.SLACK_BOT_TOKEN?.trim()) {
    const { createSlackNotifiersFromEnv } = await import('./slack-notifier');
    notifiers.push(...createSlackNotifiersFromEnv(env, logger));
  }
  return notifiers;
}
