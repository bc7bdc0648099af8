/**
 * Audit reviews (seed 000 §6 "audit cadence"): the vocabulary shared by the review workflow, the
 * client, the CLI and the reports. Pure JavaScript (zod, `@noble/hashes`), so the workflow derives
 * its sample with exactly the code `review status --verify` re-runs later.
 *
 * - `weekly`: every REJECT and every escalated proposal started in one ISO week (`2026-W48`).
 * - `spot-check`: a share (default 5 %, at least 1 when there is any) of the judge's APPROVEs of one
 *   month (`2026-11`), chosen by HMAC-SHA256(seed, workflow_id) order under a seed the review draws
 *   when it opens, after the month ended: agents choose their proposals' content (and so their
 *   workflow ids), never the seed, so they cannot steer a proposal out of the sample.
 */
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { z } from 'zod';
import { toHex, utf8 } from './encoding';
import { ApproverIdSchema } from './messages';
import { PublicKeySchema } from './identity';
import { NonceSchema, SignatureSchema } from './identity-text';
import { refusal, type Refusal } from './refusal';
import { REVIEW_WORKFLOW_ID_PREFIX } from './workflow-ids';

export const REVIEW_KINDS = ['weekly', 'spot-check'] as const;
export const ReviewKindSchema = z.enum(REVIEW_KINDS);
export type ReviewKind = z.infer<typeof ReviewKindSchema>;

/** The workflow type of every review; one run per period, id from {@link reviewWorkflowId}. */
export { REVIEW_WORKFLOW_ID_PREFIX, REVIEW_WORKFLOW_TYPE } from './workflow-ids';

const WEEK_RE = /^(\d{4})-W(\d{2})$/;
const MONTH_RE = /^(\d{4})-(\d{2})$/;
const DAY_MS = 86_400_000;

/** Start (inclusive) and end (exclusive) of a period, epoch milliseconds, UTC. */
export interface PeriodRange {
  start: number;
  end: number;
}

/** Monday 00:00 UTC of ISO week 1 of `year` (the week holding January 4th). */
function isoWeekOneMonday(year: number): number {
  const jan4 = Date.UTC(year, 0, 4);
  const weekday = (new Date(jan4).getUTCDay() + 6) % 7; // Monday = 0
  return jan4 - weekday * DAY_MS;
}

/** The ISO week (`2026-W48`) holding `ms`, in UTC. */
export function isoWeekOf(ms: number): string {
  const d = new Date(ms);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  const thursday = day + (3 - ((new Date(day).getUTCDay() + 6) % 7)) * DAY_MS;
  const year = new Date(thursday).getUTCFullYear();
  const week = 1 + Math.floor((thursday - isoWeekOneMonday(year)) / (7 * DAY_MS));
  return `${year}-W${String(week).padStart(2, '0')}`;
}

/** The month (`2026-11`) holding `ms`, in UTC. */
export function monthOf(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/**
 * Why `period` is not a valid period for `kind`, or null. Weekly reviews take an ISO week
 * (`2026-W48`), spot-checks a month (`2026-11`).
 */
export function refusePeriod(kind: ReviewKind, period: string): Refusal | null {
  if (kind === 'weekly') {
    const m = WEEK_RE.exec(period);
    if (!m) return refusal('bad-input', `week: expected an ISO week such as 2026-W48, got ${JSON.stringify(period)}`);
    const week = Number(m[2]);
    const weeks = isoWeekOf(isoWeekOneMonday(Number(m[1]) + 1) - DAY_MS).slice(6);
    if (week < 1 || week > Number(weeks))
      return refusal('bad-input', `week: ${period} does not exist (${m[1]} has ${weeks} ISO weeks)`);
    return null;
  }
  const m = MONTH_RE.exec(period);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 12)
    return refusal('bad-input', `month: expected a month such as 2026-11, got ${JSON.stringify(period)}`);
  return null;
}

/** The time range of a valid period (check it with {@link refusePeriod} first). */
export function periodRange(kind: ReviewKind, period: string): PeriodRange {
  if (kind === 'weekly') {
    const [, y, w] = WEEK_RE.exec(period)!;
    const start = isoWeekOneMonday(Number(y)) + (Number(w) - 1) * 7 * DAY_MS;
    return { start, end: start + 7 * DAY_MS };
  }
  const [, y, mo] = MONTH_RE.exec(period)!;
  return { start: Date.UTC(Number(y), Number(mo) - 1, 1), end: Date.UTC(Number(y), Number(mo), 1) };
}

/** `review-weekly-2026-W48`, `review-spot-check-2026-11`: one review per period, enforced by Temporal. */
export function reviewWorkflowId(kind: ReviewKind, period: string): string {
  return `${REVIEW_WORKFLOW_ID_PREFIX}${kind}-${period}`;
}

/** The kind and period a review id names, or null when it names none. */
export function parseReviewWorkflowId(id: string): { kind: ReviewKind; period: string } | null {
  for (const kind of REVIEW_KINDS) {
    const prefix = `${REVIEW_WORKFLOW_ID_PREFIX}${kind}-`;
    if (id.startsWith(prefix)) {
      const period = id.slice(prefix.length);
      return refusePeriod(kind, period) === null ? { kind, period } : null;
    }
  }
  return null;
}

/** One proposal a review may cover, as `audit export` showed it when the review gathered it. */
export const ReviewCandidateSchema = z.strictObject({
  workflow_id: z.string().min(1).max(256),
  proposal_id: z.string().max(256),
  /** The proposal's final verdict (any decider), or null while undecided. */
  verdict: z.enum(['APPROVE', 'REJECT', 'CLARIFY']).nullable(),
  /** Who gave the final verdict (`rules`, `judge`, `human:<id>`, `timeout`, `policy`). */
  decided_by: z.string().max(256).nullable(),
  /** A person was asked (any reason). */
  escalated: z.boolean(),
  tier: z.string().max(64).nullable(),
  action_type: z.string().max(128).nullable(),
  started_at: z.string().max(64),
});
export type ReviewCandidate = z.infer<typeof ReviewCandidateSchema>;

/**
 * What a review carries into its next run when it continues as new (its history grew long): the secret seed, when it
 * opened and was last refreshed, and every accepted mark (their nonces keep refusing replays). The candidates travel
 * as the input's own `candidates`; the sample is re-derived from them and the seed, as anyone can.
 */
export const ReviewCarriedSchema = z.strictObject({
  seed: z.string().regex(/^[0-9a-f]{32,128}$/),
  opened_at: z.iso.datetime(),
  refreshed_at: z.iso.datetime(),
  runs: z.int().min(1).max(100_000),
  marks: z.array(z.lazy(() => ReviewMarkRecordSchema)).max(200_000),
});
export type ReviewCarried = z.infer<typeof ReviewCarriedSchema>;

/**
 * A review's answer to an Update in the moment between its start (or its continuing as new) and reading its policy:
 * the client waits and asks again.
 */
export const REVIEW_OPENING_REFUSAL = 'the review is still opening; try again in a moment';

/** What `review open` starts a review with (and `review close` refreshes a weekly review with). */
export const ReviewInputSchema = z.strictObject({
  kind: ReviewKindSchema,
  period: z.string().max(16),
  candidates: z.array(ReviewCandidateSchema).max(20_000),
  /** Set only by the review itself when it continues as new. */
  carried: ReviewCarriedSchema.optional(),
});
export type ReviewInput = z.infer<typeof ReviewInputSchema>;

export const ReviewMarkKindSchema = z.enum(['correct', 'wrong']);

/** A reviewer's judgement of one proposal in a review, sent as the `reviewMark` Update. */
export const ReviewMarkSchema = z
  .strictObject({
    /** The proposal's workflow id (the CLI resolves a proposal_id to it). */
    workflow_id: z.string().min(1).max(256),
    mark: ReviewMarkKindSchema,
    /** What the verdict should have been, for a `wrong` mark. */
    should_be: z.enum(['approve', 'reject']).optional(),
    reviewer: ApproverIdSchema,
    note: z.string().max(4096).optional(),
    /** Ed25519 signature by the reviewer's key over the statement `identity/review-mark.ts` defines. */
    signature: z.strictObject({ signed_at: z.iso.datetime(), nonce: NonceSchema, value: SignatureSchema }).optional(),
  })
  .refine((m) => m.mark === 'wrong' || m.should_be === undefined, {
    message: 'should_be is only for a wrong mark',
    path: ['should_be'],
  });
export type ReviewMark = z.infer<typeof ReviewMarkSchema>;

/** `spec.reviews`: who reviews and how. */
export const ReviewSettingsSchema = z
  .strictObject({
    /** Who may mark; default: the escalation approvers. */
    reviewers: z.array(ApproverIdSchema).optional(),
    /** Reviewers' public keys; a reviewer without one here uses their `escalation.approverKeys` key. */
    reviewerKeys: z.record(ApproverIdSchema, PublicKeySchema).default({}),
    /** Refuse every unsigned mark. */
    requireSignedMarks: z.boolean().default(false),
    /** Share of the month's judge APPROVEs a spot-check samples (seed 000 §6: 5 %). */
    spotCheckShare: z.number().gt(0).max(1).default(0.05),
    /** An open review closes itself this many days after its period ended (or it opened, if later). */
    autoCloseAfterDays: z.int().positive().max(366).default(30),
  })
  .default({ reviewerKeys: {}, requireSignedMarks: false, spotCheckShare: 0.05, autoCloseAfterDays: 30 });
export type ReviewSettings = z.infer<typeof ReviewSettingsSchema>;

/** A recorded mark: what the reviewer sent, and when the review accepted it. */
export type ReviewMarkRecord = ReviewMark & { at: string };
/** A mark as the review recorded it (carried into the next run: it was validated when it was accepted). */
const ReviewMarkRecordSchema = z.strictObject({ ...ReviewMarkSchema.shape, at: z.iso.datetime() });

/** Counts and rates of one review, computed from each proposal's latest mark. */
export interface ReviewTally {
  marked: number;
  /** REJECTs (final verdict) marked, and of those marked wrong. */
  rejects_marked: number;
  rejects_wrong: number;
  /** APPROVEs (final verdict) marked, and of those marked wrong. */
  approves_marked: number;
  approves_wrong: number;
  /** Weekly reviews: rejects_wrong / rejects_marked (null when none was marked or not weekly). */
  false_negative_rate: number | null;
  /** Spot-checks: approves_wrong / approves_marked (null when none was marked or not a spot-check). */
  false_approval_rate: number | null;
}

/** The review as its status Query (and, once closed, its result) shows it. */
export interface ReviewStatus {
  review_id: string;
  kind: ReviewKind;
  period: string;
  range: { start: string; end: string };
  state: 'open' | 'closed';
  opened_at: string;
  refreshed_at: string;
  closed_at: string | null;
  /** `person` when `review close` closed it, `clock` when it closed itself (`spec.reviews.autoCloseAfterDays`). */
  closed_by: 'person' | 'clock' | null;
  /** The secret drawn when the review opened (hex); with `candidates` it re-derives the sample. */
  seed: string;
  /** Spot-checks: the share sampled. */
  share: number;
  reviewers: string[];
  /** Every proposal the review gathered (spot-checks: every judge APPROVE of the month). */
  candidates: ReviewCandidate[];
  /** Workflow ids under review: weekly, every candidate; spot-check, the sample. */
  in_review: string[];
  marks: ReviewMarkRecord[];
  tally: ReviewTally;
}

/** The memo a review carries (readable from `list` without a history fetch): its figures, for metrics. */
export interface ReviewMemo {
  kind: ReviewKind;
  period: string;
  state: 'open' | 'closed';
  in_review: number;
  marked: number;
  closed_at: string | null;
  rejects_marked: number;
  rejects_wrong: number;
  approves_marked: number;
  approves_wrong: number;
  false_negative_rate: number | null;
  false_approval_rate: number | null;
}

/** HMAC-SHA256(seed, workflow_id) in hex: a candidate's place in the sampling order. */
export function sampleScore(seed: string, workflowId: string): string {
  return toHex(hmac(sha256, utf8(seed), utf8(workflowId)));
}

/** How many of `n` candidates a spot-check samples: `ceil(share * n)`, so at least 1 when there is any. */
export function sampleSize(n: number, share: number): number {
  return n === 0 ? 0 : Math.min(n, Math.ceil(share * n - 1e-9));
}

/**
 * The spot-check sample: candidates ordered by {@link sampleScore} (ties by id), the first
 * {@link sampleSize}. Anyone holding the recorded seed and candidate list gets the same answer.
 */
export function selectSample(seed: string, workflowIds: readonly string[], share: number): string[] {
  const unique = [...new Set(workflowIds)];
  const scored = unique.map((id) => ({ id, score: sampleScore(seed, id) }));
  scored.sort((a, b) => (a.score < b.score ? -1 : a.score > b.score ? 1 : a.id < b.id ? -1 : 1));
  return scored.slice(0, sampleSize(unique.length, share)).map((s) => s.id);
}

/** Does this candidate belong in a review of `kind`? Weekly: REJECT or escalated. Spot-check: a judge APPROVE. */
export function belongsInReview(kind: ReviewKind, c: ReviewCandidate): boolean {
  if (kind === 'weekly') return c.verdict === 'REJECT' || c.escalated;
  return c.verdict === 'APPROVE' && (c.decided_by === 'rules' || c.decided_by === 'judge');
}

/** Counts and rates from the latest mark of each proposal. */
export function tallyMarks(
  kind: ReviewKind,
  candidates: readonly ReviewCandidate[],
  marks: readonly ReviewMarkRecord[],
): ReviewTally {
  const latest = new Map<string, ReviewMarkRecord>();
  for (const m of marks) latest.set(m.workflow_id, m);
  const verdictOf = new Map(candidates.map((c) => [c.workflow_id, c.verdict]));
  const t = { marked: latest.size, rejects_marked: 0, rejects_wrong: 0, approves_marked: 0, approves_wrong: 0 };
  for (const [id, m] of latest) {
    const v = verdictOf.get(id);
    if (v === 'REJECT') {
      t.rejects_marked += 1;
      if (m.mark === 'wrong') t.rejects_wrong += 1;
    } else if (v === 'APPROVE') {
      t.approves_marked += 1;
      if (m.mark === 'wrong') t.approves_wrong += 1;
    }
  }
  return {
    ...t,
    false_negative_rate: kind === 'weekly' && t.rejects_marked > 0 ? t.rejects_wrong / t.rejects_marked : null,
    false_approval_rate: kind === 'spot-check' && t.approves_marked > 0 ? t.approves_wrong / t.approves_marked : null,
  };
}

/**
 * The weekly review that is overdue at `nowMs`, or null: the last ISO week that ended more than
 * `graceMs` ago has no closed weekly review. `closedWeeks` are the periods of closed weekly reviews.
 */
export function overdueWeeklyReview(
  nowMs: number,
  closedWeeks: readonly string[],
  graceMs: number = 7 * DAY_MS,
): string | null {
  const lastEnded = isoWeekOf(nowMs - graceMs - 7 * DAY_MS);
  const range = periodRange('weekly', lastEnded);
  if (range.end + graceMs > nowMs) return null;
  return closedWeeks.includes(lastEnded) ? null : lastEnded;
}
