/**
 * ReviewState without a server: who is under review, the spot-check sample (size, reproducibility from the
 * recorded seed, not a function of ids alone), refusals, and the figures a closed review gives.
 */
import { describe, expect, it } from 'vitest';
import { verifyReview } from '../../src/client/reviews';
import {
  isoWeekOf,
  overdueWeeklyReview,
  periodRange,
  refusePeriod,
  sampleSize,
  selectSample,
  type ReviewCandidate,
  type ReviewMark,
} from '../../src/contracts/review';
import { generateIdentity } from '../../src/identity/keys';
import { signReviewMark } from '../../src/identity/sign-review-mark';
import { defaultPolicyWith } from '../../src/policy/load';
import { ReviewState } from '../../src/workflows/review-state';

const scott = generateIdentity();
const mallory = generateIdentity();
const policy = defaultPolicyWith({
  escalation: { timeout: '1h', approvers: ['scott', 'alice'], approverKeys: { scott: scott.public_key } },
});
const W48 = periodRange('weekly', '2026-W48');
const NOV = periodRange('spot-check', '2026-11');

function candidate(n: number, over: Partial<ReviewCandidate> = {}): ReviewCandidate {
  return {
    workflow_id: `proposal-${String(n).padStart(32, '0')}`,
    proposal_id: `p-${n}`,
    verdict: 'APPROVE',
    decided_by: 'judge',
    escalated: false,
    tier: 'full-judge-review',
    action_type: 'exec',
    started_at: new Date(NOV.start + n * 60_000).toISOString(),
    ...over,
  };
}

const approves = (n: number) => Array.from({ length: n }, (_, i) => candidate(i + 1));
const SEED_A = 'a'.repeat(64);
const SEED_B = 'b'.repeat(64);
const opened = new Date(NOV.end + 3_600_000).toISOString();

describe('periods', () => {
  it('ISO weeks and months have the right bounds', () => {
    expect(new Date(W48.start).toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(new Date(W48.end).toISOString()).toBe('2026-11-30T00:00:00.000Z');
    expect(isoWeekOf(Date.parse('2026-01-01T00:00:00Z'))).toBe('2026-W01');
    expect(isoWeekOf(Date.parse('2027-01-01T12:00:00Z'))).toBe('2026-W53');
    expect(refusePeriod('weekly', '2026-W54')?.reason).toBe('week: 2026-W54 does not exist (2026 has 53 ISO weeks)');
    expect(refusePeriod('spot-check', '2026-13')?.reason).toBe(
      'month: expected a month such as 2026-11, got "2026-13"',
    );
  });

  it('an ended week with no closed weekly review a week later is overdue', () => {
    const now = Date.parse('2026-12-08T12:00:00Z'); // W48 ended Nov 30; a week later is Dec 7.
    expect(overdueWeeklyReview(now, [])).toBe('2026-W48');
    expect(overdueWeeklyReview(now, ['2026-W48'])).toBeNull();
    expect(overdueWeeklyReview(Date.parse('2026-12-06T12:00:00Z'), [])).toBe('2026-W47');
  });
});

describe('spot-check sample', () => {
  it('takes 5 % (rounded up, at least 1 when there is any)', () => {
    expect([0, 1, 19, 20, 21, 100, 101].map((n) => sampleSize(n, 0.05))).toEqual([0, 1, 1, 1, 2, 5, 6]);
    const s = new ReviewState(
      'review-spot-check-2026-11',
      'spot-check',
      '2026-11',
      policy,
      SEED_A,
      approves(200),
      opened,
    );
    expect(s.inReview).toHaveLength(10);
    expect(new ReviewState('r', 'spot-check', '2026-11', policy, SEED_A, approves(1), opened).inReview).toHaveLength(1);
  });

  it('is re-derived from the recorded seed and candidates, by the workflow code and independently', () => {
    const s = new ReviewState(
      'review-spot-check-2026-11',
      'spot-check',
      '2026-11',
      policy,
      SEED_A,
      approves(200),
      opened,
    );
    const ids = approves(200).map((c) => c.workflow_id);
    expect(selectSample(SEED_A, ids, 0.05)).toEqual(s.inReview);
    // Order of the candidate list does not matter.
    expect(selectSample(SEED_A, [...ids].reverse(), 0.05)).toEqual(s.inReview);
    // node:crypto's HMAC agrees with the workflow's pure one.
    const snap = s.status();
    expect(verifyReview(snap, null)).toMatchObject({ sample_matches: true, ok: true });
    // A doctored sample is found.
    const doctored = {
      ...snap,
      in_review: [...snap.in_review.slice(1), ids.find((i) => !snap.in_review.includes(i))!],
    };
    expect(verifyReview(doctored, null).sample_matches).toBe(false);
  });

  it('is not a function of the ids alone: another seed picks differently', () => {
    const ids = approves(200).map((c) => c.workflow_id);
    const a = selectSample(SEED_A, ids, 0.05);
    const b = selectSample(SEED_B, ids, 0.05);
    expect(a).toHaveLength(10);
    expect(b).toHaveLength(10);
    expect(a).not.toEqual(b);
  });

  it("holds only the month's judge APPROVEs", () => {
    const cs = [
      candidate(1),
      candidate(2, { decided_by: 'policy' }), // no-judge: not the judge's approval
      candidate(3, { verdict: 'REJECT', decided_by: 'rules' }),
      candidate(4, { decided_by: 'human:scott', escalated: true }),
      candidate(5, { started_at: new Date(NOV.end + 1000).toISOString() }), // December
    ];
    const s = new ReviewState('r', 'spot-check', '2026-11', policy, SEED_A, cs, opened);
    expect(s.candidates.map((c) => c.workflow_id)).toEqual([candidate(1).workflow_id]);
    expect(s.refuseRefresh()?.reason).toMatch(/keeps the candidates it was opened with/);
  });
});

describe('weekly review', () => {
  const at = (n: number) => new Date(W48.start + n * 3_600_000).toISOString();
  const cs = [
    candidate(1, { verdict: 'REJECT', decided_by: 'rules', started_at: at(1) }),
    candidate(2, { verdict: 'APPROVE', decided_by: 'human:scott', escalated: true, started_at: at(2) }),
    candidate(3, { verdict: 'APPROVE', decided_by: 'judge', started_at: at(3) }), // not in a weekly review
    candidate(4, { verdict: 'REJECT', decided_by: 'judge', started_at: at(4) }),
  ];
  const now = W48.end + 3_600_000;
  const open = () =>
    new ReviewState('review-weekly-2026-W48', 'weekly', '2026-W48', policy, SEED_A, cs, new Date(now).toISOString());
  const mark = (n: number, m: 'correct' | 'wrong', reviewer = 'alice'): ReviewMark => ({
    workflow_id: candidate(n).workflow_id,
    mark: m,
    reviewer,
  });

  it('holds every REJECT and every escalated proposal of the week', () => {
    expect(open().inReview).toEqual([1, 2, 4].map((n) => candidate(n).workflow_id));
  });

  it('refuses a non-reviewer, a proposal not in review, a bad signature, a replay, a mark after close', () => {
    const s = open();
    expect(s.refuseMark(mark(1, 'wrong', 'mallory'), now)?.reason).toBe(
      'mallory is not a reviewer (spec.reviews.reviewers)',
    );
    expect(s.refuseMark(mark(3, 'wrong'), now)?.reason).toBe(
      `${candidate(3).workflow_id} is not in review review-weekly-2026-W48`,
    );
    // scott has a key: unsigned, signed by someone else, signed for another review.
    expect(s.refuseMark(mark(1, 'wrong', 'scott'), now)?.reason).toBe(
      'scott must sign marks (agent-judge review mark --key <key file>)',
    );
    const forged = signReviewMark('review-weekly-2026-W48', mark(1, 'wrong', 'scott'), mallory, new Date(now));
    expect(s.refuseMark(forged, now)?.reason).toBe("the mark signature does not verify against scott's key");
    const elsewhere = signReviewMark('review-weekly-2026-W47', mark(1, 'wrong', 'scott'), scott, new Date(now));
    expect(s.refuseMark(elsewhere, now)?.reason).toBe("the mark signature does not verify against scott's key");
    const stale = signReviewMark('review-weekly-2026-W48', mark(1, 'wrong', 'scott'), scott, new Date(now - 600_000));
    expect(s.refuseMark(stale, now)?.reason).toMatch(/^the mark signature signed at .* is 600s old/);
    const good = signReviewMark('review-weekly-2026-W48', mark(1, 'wrong', 'scott'), scott, new Date(now));
    expect(s.refuseMark(good, now)).toBeNull();
    s.addMark(good, new Date(now).toISOString());
    expect(s.refuseMark(good, now)?.reason).toMatch(/^this signed mark was already used/);
    // An unlisted reviewer with no key, alice: accepted unsigned (requireSignedMarks is off).
    expect(s.refuseMark(mark(2, 'correct'), now)).toBeNull();
    s.close(new Date(now).toISOString());
    expect(s.refuseMark(mark(2, 'correct'), now)?.reason).toBe(
      'review review-weekly-2026-W48 is closed; marks are no longer accepted',
    );
    expect(s.refuseClose()?.reason).toBe('review review-weekly-2026-W48 is already closed');
  });

  it("closing gives the false-negative rate from each REJECT's latest mark", () => {
    const s = open();
    const t = new Date(now).toISOString();
    s.addMark(mark(1, 'correct'), t);
    s.addMark(mark(1, 'wrong'), t); // supersedes
    s.addMark(mark(4, 'correct'), t);
    s.addMark(mark(2, 'wrong'), t); // an escalated APPROVE: not a REJECT
    s.close(t);
    // REJECTs marked: #1 (wrong), #4 (correct) -> 1/2.
    expect(s.status().tally).toEqual({
      marked: 3,
      rejects_marked: 2,
      rejects_wrong: 1,
      approves_marked: 1,
      approves_wrong: 1,
      false_negative_rate: 0.5,
      false_approval_rate: null,
    });
    expect(s.memo()).toMatchObject({ state: 'closed', false_negative_rate: 0.5 });
  });

  it('a refresh adds later REJECTs and escalations of the week, never drops a proposal', () => {
    const s = open();
    const added = s.refresh(
      [
        candidate(5, { verdict: 'REJECT', decided_by: 'timeout', started_at: at(5) }),
        candidate(1, { started_at: at(1), verdict: 'REJECT' }),
      ],
      new Date(now).toISOString(),
    );
    expect(added).toBe(1);
    expect(s.inReview).toContain(candidate(5).workflow_id);
    expect(s.inReview).toHaveLength(4);
  });
});
