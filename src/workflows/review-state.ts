/**
 * The review workflow's state and decisions, as a small class with pure methods (like
 * ProposalState): the workflow registers handlers and waits; this class decides who may mark what,
 * which proposals are under review, and the review's figures. No Temporal calls, no clock of its
 * own (callers pass workflow time), plain JSON fields: unit-tested without a server.
 */
import type { CompliancePolicy } from '../contracts/policy';
import {
  belongsInReview,
  periodRange,
  selectSample,
  tallyMarks,
  type ReviewCandidate,
  type ReviewCarried,
  type ReviewKind,
  type ReviewMark,
  type ReviewMarkRecord,
  type ReviewMemo,
  type ReviewStatus,
} from '../contracts/review';
import { refusal, type Refusal } from '../contracts/refusal';
import { refuseReviewMarkSignature, reviewersOf } from '../identity/review-mark';

export class ReviewState {
  private _candidates: ReviewCandidate[] = [];
  private _inReview: string[] = [];
  private _marks: ReviewMarkRecord[] = [];
  private _closedAt: string | null = null;
  private _closedBy: 'person' | 'clock' | null = null;
  private _refreshedAt: string;
  readonly range: { start: number; end: number };

  constructor(
    readonly reviewId: string,
    readonly kind: ReviewKind,
    readonly period: string,
    readonly policy: CompliancePolicy,
    /** The secret drawn when the review opened; recorded so anyone can re-derive the sample. */
    readonly seed: string,
    candidates: readonly ReviewCandidate[],
    readonly openedAt: string,
  ) {
    this.range = periodRange(kind, period);
    this._refreshedAt = openedAt;
    this._candidates = this.relevant(candidates);
    this._inReview =
      kind === 'weekly'
        ? this._candidates.map((c) => c.workflow_id)
        : selectSample(
            seed,
            this._candidates.map((c) => c.workflow_id),
            this.share,
          );
  }

  /**
   * The state as the next run of the review takes it (continue-as-new): the seed, times and marks; the candidates
   * travel beside it. `runs` counts this run.
   */
  carry(runsBefore: number): ReviewCarried {
    return {
      seed: this.seed,
      opened_at: this.openedAt,
      refreshed_at: this._refreshedAt,
      runs: runsBefore + 1,
      marks: this._marks,
    };
  }

  /** A review's next run: the state the previous one carried, on the same candidates (so the same sample). */
  static resumed(
    reviewId: string,
    kind: ReviewKind,
    period: string,
    policy: CompliancePolicy,
    candidates: readonly ReviewCandidate[],
    carried: ReviewCarried,
  ): ReviewState {
    const s = new ReviewState(reviewId, kind, period, policy, carried.seed, candidates, carried.opened_at);
    s._marks = [...carried.marks];
    s._refreshedAt = carried.refreshed_at;
    return s;
  }

  /** Spot-checks: the share of the month's judge APPROVEs sampled. */
  get share(): number {
    return this.policy.spec.reviews.spotCheckShare;
  }
  get closed(): boolean {
    return this._closedAt !== null;
  }
  get marks(): readonly ReviewMarkRecord[] {
    return this._marks;
  }
  get inReview(): readonly string[] {
    return this._inReview;
  }
  get candidates(): readonly ReviewCandidate[] {
    return this._candidates;
  }

  /** Candidates started within the period that belong in this kind of review, one per workflow id. */
  private relevant(candidates: readonly ReviewCandidate[]): ReviewCandidate[] {
    const byId = new Map<string, ReviewCandidate>();
    for (const c of candidates) {
      const t = Date.parse(c.started_at);
      if (!(t >= this.range.start && t < this.range.end)) continue;
      if (belongsInReview(this.kind, c)) byId.set(c.workflow_id, c);
    }
    return [...byId.values()].sort((a, b) => (a.started_at < b.started_at ? -1 : a.started_at > b.started_at ? 1 : 0));
  }

  /** Why the review cannot be refreshed now, or null. Only open weekly reviews grow. */
  refuseRefresh(): Refusal | null {
    if (this.closed) return refusal('review.closed', `review ${this.reviewId} is closed`);
    if (this.kind !== 'weekly')
      return refusal(
        'review.spot-check',
        'a spot-check keeps the candidates it was opened with (its sample is drawn once)',
      );
    return null;
  }

  /**
   * A weekly review takes in what `audit export` shows now: new REJECTs and escalations of its
   * week, and later verdicts of those it holds. Nothing ever leaves a review, so a mark always
   * keeps its proposal. Returns how many proposals were added.
   */
  refresh(candidates: readonly ReviewCandidate[], now: string): number {
    const before = this._candidates.length;
    const merged = new Map(this._candidates.map((c) => [c.workflow_id, c]));
    for (const c of this.relevant(candidates)) merged.set(c.workflow_id, c);
    this._candidates = this.relevant([...merged.values()]);
    this._inReview = this._candidates.map((c) => c.workflow_id);
    this._refreshedAt = now;
    return this._candidates.length - before;
  }

  /** Why a mark cannot be accepted now, or null. Used by the Update validator (`nowMs` is workflow time). */
  refuseMark(m: ReviewMark, nowMs: number): Refusal | null {
    if (this.closed) return refusal('review.closed', `review ${this.reviewId} is closed; marks are no longer accepted`);
    if (!reviewersOf(this.policy).includes(m.reviewer))
      return refusal('not-reviewer', `${m.reviewer} is not a reviewer (spec.reviews.reviewers)`);
    if (!this._inReview.includes(m.workflow_id))
      return refusal('review.not-in-review', `${m.workflow_id} is not in review ${this.reviewId}`);
    const nonces = this._marks.flatMap((x) => (x.signature ? [x.signature.nonce] : []));
    return refuseReviewMarkSignature(this.policy, this.reviewId, m, nowMs, nonces);
  }

  /** Records an accepted mark; a later mark of the same proposal supersedes an earlier one in the figures. */
  addMark(m: ReviewMark, at: string): void {
    this._marks.push({ ...m, at });
  }

  /** Why the review cannot be closed now, or null. */
  refuseClose(): Refusal | null {
    return this.closed ? refusal('review.closed', `review ${this.reviewId} is already closed`) : null;
  }

  close(at: string, by: 'person' | 'clock' = 'person'): void {
    this._closedAt = at;
    this._closedBy = by;
  }

  /** How long the review may stay open from `nowMs`: until `autoCloseAfterDays` after its period (or opening). */
  autoCloseInMs(nowMs: number): number {
    const from = Math.max(this.range.end, Date.parse(this.openedAt));
    return Math.max(1, from + this.policy.spec.reviews.autoCloseAfterDays * 86_400_000 - nowMs);
  }

  memo(): ReviewMemo {
    const t = tallyMarks(this.kind, this._candidates, this._marks);
    return {
      kind: this.kind,
      period: this.period,
      state: this.closed ? 'closed' : 'open',
      in_review: this._inReview.length,
      marked: t.marked,
      closed_at: this._closedAt,
      rejects_marked: t.rejects_marked,
      rejects_wrong: t.rejects_wrong,
      approves_marked: t.approves_marked,
      approves_wrong: t.approves_wrong,
      false_negative_rate: t.false_negative_rate,
      false_approval_rate: t.false_approval_rate,
    };
  }

  status(): ReviewStatus {
    return {
      review_id: this.reviewId,
      kind: this.kind,
      period: this.period,
      range: { start: new Date(this.range.start).toISOString(), end: new Date(this.range.end).toISOString() },
      state: this.closed ? 'closed' : 'open',
      opened_at: this.openedAt,
      refreshed_at: this._refreshedAt,
      closed_at: this._closedAt,
      closed_by: this._closedBy,
      seed: this.seed,
      share: this.share,
      reviewers: reviewersOf(this.policy),
      candidates: this._candidates,
      in_review: this._inReview,
      marks: this._marks,
      tally: tallyMarks(this.kind, this._candidates, this._marks),
    };
  }
}
