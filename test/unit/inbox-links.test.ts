/**
 * With an inbox URL configured (AGENT_JUDGE_INBOX_URL, or dev's own inbox), escalations link to the proposal's page
 * in the web inbox: Discord's title and an Inbox field, a line in Slack's message, and the CLI's pending text;
 * without one, nothing changes.
 */
import { describe, expect, it } from 'vitest';
import { renderOutcome } from '../../src/cli/outcome-text';
import { inboxProposalUrl } from '../../src/contracts/inbox-link';
import { renderEscalation } from '../../src/escalation/render';
import { renderSlackEscalation } from '../../src/escalation/slack-render';
import { sampleNotice } from '../helpers/escalation-notice';

const INBOX = 'https://inbox.example.org';

describe('links to the inbox', () => {
  const notice = sampleNotice();
  const page = `${INBOX}/p/${notice.workflow_id}`;

  it("makes the proposal page's URL under the inbox's origin", () => {
    expect(inboxProposalUrl(`${INBOX}/`, notice.workflow_id)).toBe(page);
    expect(inboxProposalUrl(INBOX, 'a b|c>')).toBe(`${INBOX}/p/a%20b%7Cc%3E`);
  });

  it('Discord: the title and an Inbox field link to the page; none without a URL', () => {
    const embed = renderEscalation(notice, [], INBOX).embeds[0]!;
    expect(embed.url).toBe(page);
    expect(embed.fields?.find((f) => f.name === 'Inbox')?.value).toBe(
      `[Open it in the inbox](${page}) to decide with your passkey`,
    );
    const plain = renderEscalation(notice).embeds[0]!;
    expect(plain.url).toBeUndefined();
    expect(plain.fields?.some((f) => f.name === 'Inbox')).toBe(false);
  });

  it('Slack: a line with the link before the buttons; none without a URL', () => {
    const line = `<${page}|Open it in the inbox> to decide with your passkey`;
    expect(JSON.stringify(renderSlackEscalation(notice, INBOX).blocks)).toContain(JSON.stringify(line));
    expect(JSON.stringify(renderSlackEscalation(notice).blocks)).not.toContain('inbox');
  });

  it("the CLI's pending text names the page; other statuses and no URL do not", () => {
    const pending = {
      proposal_id: 'pay-invoice-17',
      workflow_id: notice.workflow_id,
      status: 'awaiting_human' as const,
      verdict: null,
      verdicts: [],
      execution: null,
    };
    expect(renderOutcome(pending, INBOX)).toContain(`\n          or in the inbox: ${page}\n`);
    expect(renderOutcome(pending)).not.toContain('inbox');
    expect(renderOutcome({ ...pending, status: 'executed' }, INBOX)).not.toContain('inbox');
  });
});
