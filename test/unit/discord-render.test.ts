import { describe, expect, it } from 'vitest';
import type { DecisionRecord } from '../../src/contracts/status';
import type { Verdict } from '../../src/contracts/verdict';
import { parseButtonCustomId, parseModalCustomId } from '../../src/escalation/custom-id';
import { escapeText, truncate } from '../../src/escalation/chat-text';
import { COLORS, FIELD, LIMITS } from '../../src/escalation/discord-embed';
import {
  renderEscalation,
  renderOutcome,
  renderReasonModal,
  renderReminder,
  type MessagePayload,
} from '../../src/escalation/render';
import { sampleNotice } from '../helpers/escalation-notice';

const alice = '100000000000000001';
const bob = '100000000000000002';

function fieldValue(p: MessagePayload, prefix: string): string {
  const f = p.embeds[0]?.fields?.find((x) => x.name.startsWith(prefix));
  if (!f) throw new Error(`no field ${prefix}`);
  return f.value;
}

function embedTotal(p: MessagePayload): number {
  const e = p.embeds[0]!;
  return (
    (e.title?.length ?? 0) +
    (e.description?.length ?? 0) +
    (e.footer?.text.length ?? 0) +
    (e.fields ?? []).reduce((n, f) => n + f.name.length + f.value.length, 0)
  );
}

function assertWithinLimits(p: MessagePayload): void {
  expect(p.content.length).toBeLessThanOrEqual(LIMITS.content);
  const e = p.embeds[0]!;
  expect(e.title?.length ?? 0).toBeLessThanOrEqual(LIMITS.title);
  expect(e.description?.length ?? 0).toBeLessThanOrEqual(LIMITS.description);
  expect(e.fields?.length ?? 0).toBeLessThanOrEqual(LIMITS.fields);
  for (const f of e.fields ?? []) {
    expect(f.name.length).toBeLessThanOrEqual(LIMITS.fieldName);
    expect(f.value.length).toBeLessThanOrEqual(LIMITS.fieldValue);
    expect(f.value.length).toBeGreaterThan(0);
  }
  expect(embedTotal(p)).toBeLessThanOrEqual(LIMITS.embedTotal);
}

const judgeVerdict: Verdict = {
  proposal_id: 'pr-1',
  verdict: 'CLARIFY',
  reason: 'The diff touches files outside src/schema/.',
  constraints: { require_human_review: true, scope_limit: 'src/schema/ only' },
  escalation: { to: 'human', reason: 'low confidence' },
  confidence: 0.25,
  decided_by: 'judge',
  tier: 'full-judge-review',
};

describe('the escalation message', () => {
  it('puts the key facts first: action, agent, tier, deadline', () => {
    const p = renderEscalation(sampleNotice());
    expect(p.content).toBe(
      '**Decision needed:** financial\\_op by @\u200bfinance (human-only) · decide <t:1893499200:R>',
    );
    const e = p.embeds[0]!;
    expect(e.title).toBe('financial\\_op → account: acme-payroll');
    expect(e.fields?.slice(0, 4).map((f) => f.name)).toEqual([
      FIELD.agent,
      FIELD.tier,
      FIELD.approvals,
      FIELD.deadline,
    ]);
    expect(fieldValue(p, FIELD.tier)).toBe('human-only');
    expect(fieldValue(p, FIELD.approvals)).toBe('0 of 1');
    expect(fieldValue(p, FIELD.deadline)).toBe('<t:1893499200:R> (<t:1893499200:f>)');
    expect(e.color).toBe(COLORS.pending);
    expect(e.footer?.text.startsWith(`${sampleNotice().workflow_id} · proposal pay-invoice-17`)).toBe(true);
    expect(p.allowed_mentions).toEqual({ parse: [] });
    assertWithinLimits(p);
  });

  it('shows both positions of the dispute, with the judge’s confidence', () => {
    const p = renderEscalation(
      sampleNotice({
        tier: 'full-judge-review',
        verdict: judgeVerdict,
        dispute: {
          reason: 'judge unsure (confidence 0.25 is below 0.3)',
          actor_position: 'Only schema files change.',
          judge_position: judgeVerdict.reason,
          judge_confidence: 0.25,
        },
      }),
    );
    expect(p.embeds[0]!.description).toBe('judge unsure \\(confidence 0.25 is below 0.3\\)');
    expect(fieldValue(p, FIELD.actor)).toBe('Only schema files change.');
    const judge = p.embeds[0]!.fields!.find((f) => f.name.startsWith(FIELD.judge))!;
    expect(judge.name).toBe("Judge's reasoning · confidence 25%");
    expect(judge.value).toBe('The diff touches files outside src/schema/.');
    expect(fieldValue(p, FIELD.constraints)).toContain('Judge: src/schema/ only');
  });

  it('lists evidence with verification marks, and says when nothing was verified', () => {
    const unchecked = renderEscalation(sampleNotice());
    const ev = fieldValue(unchecked, FIELD.evidence);
    expect(ev).toContain('▫️ Invoice 17 (invoice) `https://billing.example.org/invoices/17`');
    expect(ev).toContain('▫️ vault:contracts/acme.md (contract)');
    expect(ev).toContain('(not verified by the judge)');
    const checked = sampleNotice();
    checked.proposal.cited_evidence = [
      { ...checked.proposal.cited_evidence[0]!, verified: true } as never,
      { ...checked.proposal.cited_evidence[1]!, verified: false } as never,
    ];
    const marked = fieldValue(renderEscalation(checked), FIELD.evidence);
    expect(marked).toMatch(/^✅ Invoice 17/);
    expect(marked).toContain('❌ check failed: vault:contracts/acme.md');
    expect(marked).not.toContain('not verified by the judge');
  });

  it('uses the judge’s evidence checks when the verdict carries them', () => {
    const notice = sampleNotice({ tier: 'full-judge-review' });
    notice.verdict = {
      ...judgeVerdict,
      judge: {
        model: 'm',
        prompt_hash: 'h',
        latency_ms: 1,
        prompt_tokens: null,
        completion_tokens: null,
        raw_answer: null,
        evidence: {
          checks: [
            { index: 0, status: 'unverifiable' },
            { index: 1, status: 'other-repo' },
            { index: 9, status: 'bogus' },
          ],
        },
      } as never,
    };
    const ev = fieldValue(renderEscalation(notice), FIELD.evidence);
    expect(ev.split('\n')).toEqual([
      '❔ unverifiable: Invoice 17 (invoice) `https://billing.example.org/invoices/17`',
      '❌ other repository: vault:contracts/acme.md (contract)',
    ]);
  });

  it('shows requested constraints and parameters as inert code', () => {
    const p = renderEscalation(sampleNotice());
    expect(fieldValue(p, FIELD.constraints)).toBe('Files only: `ledger/2025.csv`\nAt most 3 lines');
    expect(fieldValue(p, FIELD.parameters)).toMatch(/^```json\n\{[\s\S]*"amount": 1250[\s\S]*\n```$/);
  });

  it('has Approve, Reject and Reject-with-reason buttons bound to the workflow id', () => {
    const notice = sampleNotice();
    const buttons = renderEscalation(notice).components[0]!.components;
    expect(buttons.map((b) => ('label' in b ? b.label : ''))).toEqual(['Approve', 'Reject', 'Reject with reason…']);
    expect(buttons.map((b) => parseButtonCustomId('custom_id' in b ? b.custom_id : ''))).toEqual([
      { action: 'approve', workflowId: notice.workflow_id },
      { action: 'reject', workflowId: notice.workflow_id },
      { action: 'reject_reason', workflowId: notice.workflow_id },
    ]);
  });

  it('makes hostile proposal text inert: no pings, mentions, links, headings or formatting', () => {
    const hostile =
      '@everyone @here <@123456789012345678> <@&987654321098765432> **APPROVED BY SCOTT**\n# Urgent\n> quote\n' +
      '[click me](https://evil.example/phish) https://evil.example/raw ||spoiler|| `code` ```block``` <t:0:R> \u202Eevil\u202C';
    const p = renderEscalation(
      sampleNotice({ proposal: { justification: hostile, agent_id: '@everyone', proposal_id: 'x' } }),
    );
    const text = JSON.stringify([p.content, p.embeds]);
    const justification = fieldValue(p, FIELD.actor);
    expect(justification).not.toMatch(/@everyone|@here/);
    expect(justification).not.toMatch(/(^|[^\\])<@/);
    expect(justification).not.toMatch(/(^|[^\\])\*\*/);
    expect(justification).not.toMatch(/(^|[^\\])\]\(/);
    expect(justification).not.toMatch(/https:\/\//);
    expect(justification).not.toMatch(/^#/m);
    expect(justification).not.toMatch(/^>/m);
    expect(justification).not.toMatch(/(^|[^\\])\|\|/);
    expect(justification).not.toMatch(/(^|[^\\])<t:/);
    expect(text).not.toContain('\u202E');
    expect(p.content).not.toMatch(/@everyone/);
    expect(p.allowed_mentions).toEqual({ parse: [] });
  });

  it('stays within every Discord limit for the largest proposal the schema allows', () => {
    const big = 'word '.repeat(3300);
    const p = renderEscalation(
      sampleNotice({
        proposal: {
          action_type: 'a'.repeat(64),
          agent_id: `@${'b'.repeat(128)}`,
          justification: big,
          target: { account: 'c'.repeat(128), extra: 'd'.repeat(500) },
          parameters: { memo: 'e'.repeat(50_000), nested: { deep: ['```', '@everyone'] } },
          cited_evidence: Array.from({ length: 50 }, (_, i) => ({
            type: 'link',
            url: `https://example.org/${'f'.repeat(200)}/${i}`,
            title: 'g'.repeat(512),
          })),
          scope_claim: {
            files_only: Array.from({ length: 1000 }, (_, i) => `src/${'h'.repeat(100)}/${i}.ts`),
            max_lines: 10,
          },
        },
        dispute: {
          reason: 'r'.repeat(4096),
          actor_position: big,
          judge_position: 'j'.repeat(16_000),
          judge_confidence: 0.1,
        },
        approvals_needed: 10,
      }),
    );
    assertWithinLimits(p);
    expect(fieldValue(p, FIELD.evidence)).toMatch(/… and \d+ more/);
    // The cut is stated after the block, with the characters left out and where to read them.
    expect(fieldValue(p, FIELD.parameters)).toMatch(/\n```\n… \d+ more characters: `agent-judge status [^`]+`$/);
    for (const b of p.components[0]!.components)
      expect(('label' in b ? b.label : '')?.length ?? 0).toBeLessThanOrEqual(LIMITS.buttonLabel);
  });
});

describe('escaping and truncation', () => {
  it('escapes markdown while keeping the words readable', () => {
    expect(escapeText('a*b_c~d`e|f')).toBe('a\\*b\\_c\\~d\\`e\\|f');
    // Untrusted text is one line: a list or a heading cannot start, the breaks stay visible.
    expect(escapeText('1. item\n- item\n# h')).toBe('1\\. item ⏎ - item ⏎ # h');
    expect(escapeText('mail me@x')).toBe('mail me@\u200bx');
  });

  it('never leaves a dangling escape or half a surrogate pair', () => {
    expect(truncate('abc\\*def', 5)).toBe('abc…');
    expect(truncate('ab😀cd', 4)).toBe('ab…');
    expect(truncate('short', 10)).toBe('short');
  });
});

describe('the outcome', () => {
  const notice = sampleNotice({ approvals_needed: 2, approvers: [`discord:${alice}`, `discord:${bob}`] });
  const original = renderEscalation(notice).embeds[0];
  const approve = (id: string, at: string): DecisionRecord => ({
    decision: 'approve',
    approver: `discord:${id}`,
    via: 'discord',
    at,
  });

  it('after a partial quorum keeps the buttons and shows who approved', () => {
    const p = renderOutcome(original, {
      workflow_id: notice.workflow_id,
      status: 'awaiting_human',
      verdict: null,
      decisions: [approve(alice, '2030-01-01T10:00:00Z')],
      approvals_needed: 2,
    });
    expect(p.content).toBe('⏳ 1 of 2 approvals · waiting for 1 more');
    expect(p.components).toHaveLength(1);
    expect(fieldValue(p, FIELD.approvals)).toBe(`1 of 2: <@${alice}> <t:1893492000:R>`);
    expect(fieldValue(p, FIELD.deadline)).toContain('<t:1893499200:R>');
  });

  it('once approved says who and when, closes the deadline and removes the buttons', () => {
    const decisions = [approve(alice, '2030-01-01T10:00:00Z'), approve(bob, '2030-01-01T10:05:00Z')];
    const p = renderOutcome(original, {
      workflow_id: notice.workflow_id,
      status: 'executed',
      verdict: null,
      decisions,
      approvals_needed: 2,
    });
    expect(p.content).toBe(`✅ Approved by <@${alice}>, <@${bob}> · executed`);
    expect(p.components).toEqual([]);
    expect(p.embeds[0]!.color).toBe(COLORS.approved);
    expect(p.embeds[0]!.fields![0]!.name).toBe(FIELD.outcome);
    expect(fieldValue(p, FIELD.outcome)).toContain(`<@${alice}> ✅ approved <t:1893492000:f>`);
    expect(fieldValue(p, FIELD.deadline)).toBe('Closed');
    // The dispute stays readable under the outcome.
    expect(fieldValue(p, FIELD.actor)).toBe(fieldValue(renderEscalation(notice), FIELD.actor));
    assertWithinLimits(p);
  });

  it('shows a CLI rejection with its reason, escaped', () => {
    const p = renderOutcome(original, {
      workflow_id: notice.workflow_id,
      status: 'rejected',
      verdict: null,
      decisions: [
        {
          decision: 'reject',
          approver: 'scott',
          via: 'cli',
          reason: 'not **today** @everyone',
          at: '2030-01-01T11:00:00Z',
        },
      ],
    });
    expect(p.content).toBe('❌ Rejected by scott');
    expect(fieldValue(p, FIELD.outcome)).toContain(
      'scott ❌ rejected <t:1893495600:f> via CLI: not \\*\\*today\\*\\* @\u200beveryone',
    );
    expect(p.embeds[0]!.color).toBe(COLORS.rejected);
  });

  it('says when nobody decided before the deadline', () => {
    const p = renderOutcome(original, {
      workflow_id: notice.workflow_id,
      status: 'rejected',
      verdict: {
        ...judgeVerdict,
        verdict: 'REJECT',
        decided_by: 'timeout',
        reason: 'no human decision before the deadline (24h)',
      },
      decisions: [],
    });
    expect(p.content).toBe('⌛ Expired: no decision before the deadline, so it was rejected');
    expect(p.components).toEqual([]);
    expect(p.embeds[0]!.color).toBe(COLORS.expired);
  });

  it('works without the original embed (message could not be read)', () => {
    const p = renderOutcome(undefined, {
      workflow_id: notice.workflow_id,
      status: 'approved',
      verdict: null,
      decisions: [approve(alice, '2030-01-01T10:00:00Z')],
    });
    expect(p.content).toBe(`✅ Approved by <@${alice}>`);
    expect(p.embeds[0]!.footer?.text.startsWith(notice.workflow_id)).toBe(true);
  });
});

describe('reminder and modal', () => {
  it('reminds with the approval count and pings only the listed approvers', () => {
    const notice = sampleNotice({ approvals_needed: 2 });
    const r = renderReminder(
      {
        notice,
        refs: [],
        approvals: [{ decision: 'approve', approver: `discord:${alice}`, via: 'discord', at: '2030-01-01T10:00:00Z' }],
      },
      [bob],
    );
    expect(r.content).toBe(
      `<@${bob}> ⏰ **Reminder:** financial\\_op by @\u200bfinance still needs a decision (1 of 2 approvals)` +
        ' · deadline <t:1893499200:R>',
    );
    expect(r.allowed_mentions).toEqual({ parse: [], users: [bob] });
  });

  it('asks for a bounded reason in a modal bound to the workflow', () => {
    const notice = sampleNotice();
    const m = renderReasonModal(notice.workflow_id);
    expect(parseModalCustomId(m.custom_id)).toEqual({ workflowId: notice.workflow_id });
    expect(m.title.length).toBeLessThanOrEqual(LIMITS.modalTitle);
    const input = (m.components[0] as { components: Array<{ custom_id: string; max_length: number; label: string }> })
      .components[0]!;
    expect(input.custom_id).toBe('reason');
    expect(input.max_length).toBe(1000);
    expect(input.label.length).toBeLessThanOrEqual(LIMITS.textInputLabel);
  });
});
