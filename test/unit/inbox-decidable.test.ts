/**
 * The inbox marks a pending proposal the signed-in approver cannot decide: the same check the proposal's
 * `humanDecision` Update makes (refuseDecider, over the approvers its run was started with), the reason in words, and
 * no Approve/Reject/edit buttons; a proposal they can decide keeps them, with a place for a refusal beside them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { refuseDecider } from '../../src/contracts/decider';
import type { ProposalRecord } from '../../src/contracts/status';
import { whyCannotDecide } from '../../src/inbox/decidable';
import { inboxPage, proposalPage } from '../../src/inbox/pages';
import { visibleText } from '../helpers/inbox-browser';

function pending(approvers: readonly string[] | undefined): ProposalRecord {
  return {
    proposal_id: 'p-1',
    workflow_id: 'proposal-p-1',
    status: 'awaiting_human',
    stage: 'awaiting_human',
    tier: 'human-only',
    decisions: [],
    approvals_needed: 1,
    ...(approvers ? { approvers } : {}),
    deadlines: { clarification: null, human: '2026-01-01T10:00:00.000Z' },
    dispute: { reason: 'a person must decide', actor_position: 'pay', judge_position: 'none', judge_confidence: null },
    verdict: null,
    proposal: {
      agent_id: '@eng',
      action_type: 'financial_op',
      justification: 'j',
      cited_evidence: [],
      target: { account: 'acct-1' },
      parameters: { amount: 5, currency: 'EUR' },
    },
  } as unknown as ProposalRecord;
}

describe('a proposal the approver cannot decide', () => {
  it('started before the approver was listed: the reason and no buttons, on its page and its inbox card', () => {
    const s = pending(['scott']);
    const page = proposalPage(s, 'tess').html;
    expect(visibleText(page)).toContain(
      'You cannot decide this proposal: you are not among the approvers it was started with (scott); ' +
        'an approver listed since decides only proposals started after.',
    );
    expect(page).not.toContain('id="decide"');
    expect(page).not.toMatch(/>\s*Approve\s*</);
    expect(page).not.toContain('Approve with edits');
    const card = visibleText(inboxPage('tess', 'csrf', [{ status: s, decidedByMe: false }]).html);
    expect(card).toContain('you are not among the approvers it was started with (scott)');
  });

  it('an approver it was started with gets the buttons and the place for a refusal beside them, no notice', () => {
    const page = proposalPage(pending(['scott', 'tess']), 'tess').html;
    expect(page).toContain('id="decide"');
    expect(page).toMatch(/id="decide-refusal"[^>]*hidden[^>]*>\s*<\/p>\s*<button class="approve"/);
    expect(page).not.toContain('cannot-decide');
    const card = inboxPage('tess', 'csrf', [{ status: pending(['scott', 'tess']), decidedByMe: false }]).html;
    expect(card).not.toContain('cannot-decide');
  });

  it('a record without approvers (written before they were recorded) is left to the workflow to refuse', () => {
    expect(whyCannotDecide(pending(undefined), 'tess')).toBeNull();
    expect(proposalPage(pending(undefined), 'tess').html).toContain('id="decide"');
  });

  it('the inbox shows buttons exactly when the workflow check would accept the approver', () => {
    const name = fc.constantFrom('scott', 'tess', 'mallory', 'Scott', 'scott ', '');
    fc.assert(
      fc.property(fc.uniqueArray(name, { maxLength: 4 }), name, (approvers, approver) => {
        const accepted = refuseDecider(approvers, approver) === null;
        expect(accepted).toBe(approvers.includes(approver));
        const page = proposalPage(pending(approvers), approver).html;
        expect(page.includes('id="decide"')).toBe(accepted);
        expect(page.includes('cannot-decide')).toBe(!accepted);
      }),
    );
  });

  it('the refusal names the workflow code and its unchanged sentence', () => {
    expect(refuseDecider(['scott'], 'mallory')).toEqual({
      code: 'not-approver',
      reason: 'mallory is not an approver for this proposal',
    });
  });
});
