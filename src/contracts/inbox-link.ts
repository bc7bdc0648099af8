/**
 * Where a proposal's page is in the web approval inbox (docs/inbox.md): the escalation notices (Discord, Slack) and
 * the CLI's pending text link there when an inbox URL is configured (`AGENT_JUDGE_INBOX_URL`, or `dev`'s own inbox).
 */

/** `https://inbox.example.org/p/<workflow id>`: the proposal's page under the inbox's public URL (an origin). */
export function inboxProposalUrl(inboxUrl: string, workflowId: string): string {
  return `${inboxUrl.replace(/\/+$/, '')}/p/${encodeURIComponent(workflowId)}`;
}
