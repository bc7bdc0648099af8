/**
 * The web inbox's public URL (`AGENT_JUDGE_INBOX_URL`, docs/inbox.md), else the inbox of the running `agent-judge dev`
 * whose Temporal the command talks to (its record in the user's state folder), else undefined. The environment
 * schema (src/config/env.ts) checks the value with the rest of the environment before a command connects; this reader
 * imports nothing but node:fs, so the fast `status` path loads nothing for it.
 */
import { readRunningDev } from './user-state';

export function inboxUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const set = env.AGENT_JUDGE_INBOX_URL?.trim();
  if (set) return set;
  const dev = readRunningDev(env);
  const address = env.TEMPORAL_ADDRESS?.trim();
  return dev?.inbox && (!address || address === dev.temporal.address) ? dev.inbox.url : undefined;
}
