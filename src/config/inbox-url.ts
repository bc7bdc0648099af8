/**
 * The web inbox's public URL (`AGENT_JUDGE_INBOX_URL`, docs/inbox.md), or undefined when none is set. The environment
 * schema (src/config/env.ts) checks the value with the rest of the environment before a command connects; this reader
 * imports nothing, so the fast `status` path loads nothing for it.
 */
export function inboxUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.AGENT_JUDGE_INBOX_URL?.trim() || undefined;
}
