/**
 * Audit reviews on the real dev server: a weekly review over real proposals (a REJECT and an escalation), marks by
 * a listed reviewer with a signed key, refusals that change nothing (non-reviewer, bad signature, proposal not in
 * the review, after close), the rates at close and the memo the live metrics read; a spot-check's sample
 * re-derived from what it recorded, and a doctored candidate list found by --verify's comparison with audit export.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Report } from '../../src/audit/report';
import type { Client } from '@temporalio/client';
import { gatherCandidates } from '../../src/audit/review-candidates';
import { decide, listProposals, submitAndWait } from '../../src/client/proposals';
import {
  closeReview,
  listReviews,
  type ListedReview,
  markReview,
  openReview,
  reviewFigures,
  reviewStatus,
  verifyReview,
} from '../../src/client/reviews';
import { isoWeekOf, monthOf, periodRange, reviewWorkflowId, type ReviewCandidate } from '../../src/contracts/review';
import { generateIdentity } from '../../src/identity/keys';
import { performApproved, proposal, startSystem, type TestSystem } from '../helpers/system';

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));
const scott = generateIdentity();
const mallory = generateIdentity();
let sys: TestSystem;
let client: Client;
const week = isoWeekOf(Date.now());
const reviewId = reviewWorkflowId('weekly', week);
const wf: Record<'rejected' | 'escalated' | 'executed', string> = { rejected: '', escalated: '', executed: '' };
let escalatedProposalId = '';

/** How many Updates the review's history accepted: a refused mark must not add one. */
async function acceptedUpdates(id: string): Promise<number> {
  const history = await client.workflow.getHandle(id).fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
}

/** The refusal's message, or 'accepted'. */
async function attempt(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
    return 'accepted';
  } catch (err) {
    return (err as Error).message;
  }
}

beforeAll(async () => {
  sys = await startSystem({
    spec: {
      escalation: {
        timeout: '1m',
        approvers: ['scott', 'alice'],
        approverKeys: { scott: scott.public_key },
        reminderAt: 0,
      },
    },
  });
  client = sys.client;
  const tq = { taskQueue: sys.taskQueues.workflow };
  const rejected = await submitAndWait(client, proposal('exec', { parameters: { command: ['rm', 'x'] } }), tq);
  const human = proposal('financial_op');
  const escalated = await submitAndWait(client, human, tq);
  escalatedProposalId = String(human.proposal_id);
  const approved = await decide(client, escalatedProposalId, {
    decision: 'approve',
    approver: 'alice',
    reason: 'budgeted',
  });
  // The caller performs a financial op itself: it redeems the approval's token, and the run closes.
  await performApproved(sys, approved);
  const executed = await submitAndWait(client, proposal('memory_write'), tq);
  wf.rejected = rejected.workflow_id;
  wf.escalated = escalated.workflow_id;
  wf.executed = executed.workflow_id;
  const ids = Object.values(wf);
  for (let i = 0; i < 80; i++) {
    const listed = await listProposals(client, { sinceMs: 3_600_000 });
    if (listed.filter((r) => ids.includes(r.workflow_id) && r.closed_at !== null).length === ids.length) break;
    await new Promise((r) => setTimeout(r, 250));
  }
});
afterAll(async () => sys?.stop());

describe('weekly review', () => {
  it('opens over the week: every REJECT and every escalated proposal, recorded with its seed', async () => {
    const candidates = await gatherCandidates(client, 'weekly', week, sys.policy);
    const review = await openReview(client, 'weekly', week, candidates, { taskQueue: sys.taskQueues.workflow });
    expect(review).toMatchObject({ review_id: reviewId, kind: 'weekly', period: week, state: 'open' });
    expect(review.in_review).toEqual(expect.arrayContaining([wf.rejected, wf.escalated]));
    expect(review.in_review).not.toContain(wf.executed);
    expect(review.seed).toMatch(/^[0-9a-f]{64}$/);
    expect(review.candidates.find((c) => c.workflow_id === wf.escalated)).toMatchObject({
      verdict: 'APPROVE',
      decided_by: 'human:alice',
      escalated: true,
    });
  });

  it('accepts a signed mark from a listed reviewer; refusals change nothing', async () => {
    const ok = await markReview(
      client,
      reviewId,
      { proposal: wf.rejected, mark: 'wrong', should_be: 'approve', reviewer: 'scott', note: 'rm of a scratch file' },
      { key: scott },
    );
    expect(ok.marks).toEqual([
      expect.objectContaining({ workflow_id: wf.rejected, mark: 'wrong', should_be: 'approve', reviewer: 'scott' }),
    ]);
    const updatesBefore = await acceptedUpdates(reviewId);

    const refusals = [
      await attempt(() => markReview(client, reviewId, { proposal: wf.rejected, mark: 'correct', reviewer: 'carol' })),
      await attempt(() => markReview(client, reviewId, { proposal: wf.rejected, mark: 'correct', reviewer: 'scott' })),
      await attempt(() =>
        markReview(client, reviewId, { proposal: wf.rejected, mark: 'correct', reviewer: 'scott' }, { key: mallory }),
      ),
      await attempt(() => markReview(client, reviewId, { proposal: wf.executed, mark: 'correct', reviewer: 'alice' })),
    ];
    expect(refusals).toEqual([
      'mark refused: carol is not a reviewer (spec.reviews.reviewers)',
      'mark refused: scott must sign marks (agent-judge review mark --key <key file>)',
      "mark refused: the mark signature does not verify against scott's key",
      `mark refused: ${wf.executed} is not in review ${reviewId}`,
    ]);
    const after = await reviewStatus(client, reviewId);
    expect(after.marks).toHaveLength(1);
    expect(await acceptedUpdates(reviewId)).toBe(updatesBefore);
  });

  it('resolves a proposal_id, closes with the rates, and refuses marks after close', async () => {
    await markReview(client, reviewId, { proposal: escalatedProposalId, mark: 'correct', reviewer: 'alice' });
    const fresh = await gatherCandidates(client, 'weekly', week, sys.policy);
    const closed = await closeReview(client, reviewId, fresh);
    expect(closed.state).toBe('closed');
    expect(closed.closed_by).toBe('person');
    // REJECTs marked: the exec (wrong) -> 1/1; the escalated approval is not a REJECT.
    expect(closed.tally).toMatchObject({ marked: 2, rejects_marked: 1, rejects_wrong: 1, false_negative_rate: 1 });

    const late = await attempt(() =>
      markReview(client, reviewId, { proposal: wf.rejected, mark: 'correct', reviewer: 'scott' }, { key: scott }),
    );
    expect(late).toBe(`mark refused: review ${reviewId} is closed`);
    const final = await reviewStatus(client, reviewId);
    expect(final.marks).toHaveLength(2);
    expect(final.tally.false_negative_rate).toBe(1);
    // Reopening a closed period is refused: one review per period, one seed.
    const again = await attempt(() =>
      openReview(client, 'weekly', week, fresh, { taskQueue: sys.taskQueues.workflow }),
    );
    expect(again).toBe(`review ${reviewId} is already closed`);
  });

  it('publishes its figures in its memo (what the live metrics read, without fetching history)', async () => {
    let listed: ListedReview | undefined;
    for (let i = 0; i < 40; i++) {
      listed = (await listReviews(client)).find((r) => r.review_id === reviewId);
      if (listed?.memo?.state === 'closed') break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(listed?.memo).toMatchObject({ kind: 'weekly', period: week, state: 'closed', rejects_wrong: 1 });
    if (!listed) throw new Error(`${reviewId} is not listed`);
    const figures = reviewFigures([listed], Date.now());
    expect(figures).toMatchObject({ falseNegativeRate: 1, rejectsMarked: 1, falseApprovalRate: null });
  });
});

describe('agent-judge report and review (the built CLI against this server)', () => {
  const cli = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [BIN, '--address', inject('temporalAddress'), '--namespace', inject('temporalNamespace'), ...args],
        { env: { ...process.env, AGENT_JUDGE_POLICY: undefined } },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });

  it('the weekly report lists the REJECT with its mark, the escalation, and the closed review', async () => {
    const r = await cli(['report', 'weekly', '--week', week, '--format', 'json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.review).toMatchObject({ review_id: reviewId, state: 'closed', marked: 2, false_negative_rate: 1 });
    const rejected = report.incidents.find((i) => i.workflow_id === wf.rejected);
    expect(rejected).toMatchObject({
      verdict: 'REJECT',
      rule: 'exec.allowlist',
      decided_by: 'rules',
      review_mark: { mark: 'wrong', should_be: 'approve', reviewer: 'scott', note: 'rm of a scratch file' },
    });
    const escalated = report.incidents.find((i) => i.workflow_id === wf.escalated);
    expect(escalated).toMatchObject({
      escalated: true,
      decided_by: 'human:alice',
      decisions: [{ decision: 'approve', approver: 'alice', reason: 'budgeted' }],
      dispute: { reason: 'tier human-only: a person must decide' },
    });
    expect(report.incidents.some((i) => i.workflow_id === wf.executed)).toBe(false);
    // The closed review's figure: 1 of 1 REJECT marked wrong.
    expect(report.metrics.find((m) => m.name === 'falseNegativeRate')).toMatchObject({
      value: 1,
      numerator: 1,
      denominator: 1,
    });
  });

  it('review commands answer in one line: a closed review, an unknown one, a bad id', async () => {
    const late = await cli(['review', 'mark', reviewId, wf.rejected, 'correct', '--reviewer', 'alice']);
    expect(late.code).toBe(1);
    expect(late.stderr).toBe(`agent-judge: mark refused: review ${reviewId} is closed\n`);
    const missing = await cli(['review', 'status', 'review-weekly-2001-W01']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('agent-judge: no review review-weekly-2001-W01 (agent-judge review open ...)\n');
    const bad = await cli(['review', 'status', 'weekly-2026-W99']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'agent-judge: review: expected an id such as review-weekly-2026-W48 or review-spot-check-2026-11, ' +
        'got "weekly-2026-W99"\n',
    );
    const week99 = await cli(['review', 'open', 'weekly', '--week', '2026-W99']);
    expect(week99.code).toBe(2);
    expect(week99.stderr).toBe('agent-judge: --week: 2026-W99 does not exist (2026 has 53 ISO weeks)\n');
  });
});

describe('spot-check', () => {
  it('samples 5 % under a seed it draws; the sample re-derives, and a doctored candidate list is found', async () => {
    // A month that has ended, with candidates the server never saw: exactly what --verify must catch.
    const oct = periodRange('spot-check', '2026-10');
    const fake: ReviewCandidate[] = Array.from({ length: 40 }, (_, i) => ({
      workflow_id: `proposal-${String(i).padStart(32, 'f')}`,
      proposal_id: `fake-${i}`,
      verdict: 'APPROVE',
      decided_by: 'judge',
      escalated: false,
      tier: 'full-judge-review',
      action_type: 'exec',
      started_at: new Date(oct.start + i * 3_600_000).toISOString(),
    }));
    const review = await openReview(client, 'spot-check', '2026-10', fake, { taskQueue: sys.taskQueues.workflow });
    expect(review.candidates).toHaveLength(40);
    expect(review.in_review).toHaveLength(2); // ceil(5 % of 40)
    expect(verifyReview(review, null)).toMatchObject({ sample_matches: true });
    const fresh = await gatherCandidates(client, 'spot-check', '2026-10', sys.policy);
    const v = verifyReview(review, fresh);
    expect(v.ok).toBe(false);
    expect(v.unexpected_candidates).toHaveLength(40);
    // A spot-check of a month that has not ended is refused before anything starts (its sample is drawn once).
    const thisMonth = monthOf(Date.now());
    const now = await attempt(() =>
      openReview(client, 'spot-check', thisMonth, [], { taskQueue: sys.taskQueues.workflow }),
    );
    expect(now).toBe(`month: ${thisMonth} has not ended; a spot-check samples a whole month, open it afterwards`);
  });
});
