/**
 * Audit reviews from the client side: open one per period, mark proposals as a reviewer (signed),
 * read, verify and close it, and read the figures of closed reviews (what the live metrics and the
 * reports use). The candidates come from the caller (the CLI reads them with `audit export`); the
 * review workflow keeps only those that belong, and `verifyReview` checks them against a fresh export.
 */
import { createHmac } from 'node:crypto';
import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { AgentJudgeError, BadInputError, NotFoundError } from '../contracts/errors';
import type { KeyFile } from '../contracts/identity';
import { refusalError } from '../contracts/refusal';
import {
  belongsInReview,
  parseReviewWorkflowId,
  periodRange,
  refusePeriod,
  REVIEW_OPENING_REFUSAL,
  REVIEW_WORKFLOW_TYPE,
  ReviewMarkSchema,
  reviewWorkflowId,
  sampleSize,
  overdueWeeklyReview,
  type ReviewCandidate,
  type ReviewKind,
  type ReviewMark,
  type ReviewMemo,
  type ReviewStatus,
} from '../contracts/review';
import { describeIssues } from '../contracts/zod-error';
import { signReviewMark } from '../identity/sign-review-mark';
import {
  DEFAULT_TASK_QUEUES,
  REVIEW_MEMO_KEY,
  reviewCloseUpdate,
  reviewMarkUpdate,
  reviewRefreshUpdate,
  reviewStatusQuery,
} from '../names';
import { grpcCode, GrpcStatus } from './grpc';
import { RefusedError } from './proposals';

/** The review id a user typed: a full id (`review-weekly-2026-W48`) or `weekly-2026-W48`. */
export function reviewIdOf(text: string): string {
  const id = text.startsWith('review-') ? text : `review-${text}`;
  if (!parseReviewWorkflowId(id))
    throw new BadInputError(
      `review: expected an id such as review-weekly-2026-W48 or review-spot-check-2026-11, got ${JSON.stringify(text)}`,
    );
  return id;
}

function isMissing(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError || grpcCode(err) === GrpcStatus.NOT_FOUND;
}

/** The review as it stands: its status Query while open, its result once closed. */
export async function reviewStatus(client: Client, reviewId: string): Promise<ReviewStatus> {
  const handle = client.workflow.getHandle(reviewId);
  let running: boolean;
  try {
    running = (await handle.describe()).status.name === 'RUNNING';
  } catch (err) {
    if (isMissing(err)) throw new NotFoundError(`no review ${reviewId} (agent-judge review open ...)`);
    throw err;
  }
  try {
    if (!running) return (await handle.result()) as ReviewStatus;
    // The first workflow task builds the state: a review opened a moment ago may not answer yet.
    for (let attempt = 0; ; attempt++) {
      try {
        return await handle.query(reviewStatusQuery);
      } catch (err) {
        if (attempt >= 60 || !String((err as Error).message).includes('still opening')) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  } catch (err) {
    if (err instanceof WorkflowFailedError)
      throw new AgentJudgeError(`review ${reviewId} failed: ${err.cause?.message ?? err.message}`);
    throw err;
  }
}

/**
 * Opens the review of one period with the candidates `audit export` shows now (filtered here to those that
 * belong, to keep the start small). An open weekly review is refreshed with them instead; an open spot-check is
 * returned as it is (its sample was drawn once); a closed review is refused.
 */
export async function openReview(
  client: Client,
  kind: ReviewKind,
  period: string,
  candidates: readonly ReviewCandidate[],
  { taskQueue = DEFAULT_TASK_QUEUES.workflow, nowMs = Date.now() }: { taskQueue?: string; nowMs?: number } = {},
): Promise<ReviewStatus> {
  const bad = refusePeriod(kind, period);
  if (bad) throw refusalError(bad);
  const range = periodRange(kind, period);
  if (range.start > nowMs) throw new BadInputError(`${kind === 'weekly' ? 'week' : 'month'}: ${period} has not begun`);
  if (kind === 'spot-check' && range.end > nowMs)
    throw new BadInputError(`month: ${period} has not ended; a spot-check samples a whole month, open it afterwards`);
  const relevant = candidates.filter((c) => {
    const t = Date.parse(c.started_at);
    return t >= range.start && t < range.end && belongsInReview(kind, c);
  });
  const reviewId = reviewWorkflowId(kind, period);
  try {
    await client.workflow.start(REVIEW_WORKFLOW_TYPE, {
      workflowId: reviewId,
      taskQueue,
      args: [{ kind, period, candidates: relevant }],
      // One review per period, ever: a closed review is never replaced by a new run with a new seed.
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError || grpcCode(err) === GrpcStatus.ALREADY_EXISTS))
      throw err;
    const existing = await reviewStatus(client, reviewId);
    if (existing.state === 'closed') throw new RefusedError(`review ${reviewId} is already closed`);
    if (kind === 'weekly') return refreshReview(client, reviewId, relevant);
    return existing;
  }
  return reviewStatus(client, reviewId);
}

/** How long an Update waits for a review that is opening or continuing as new before giving up. */
const REVIEW_BUSY_WAIT_MS = 15_000;

async function update<T>(client: Client, what: string, reviewId: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + REVIEW_BUSY_WAIT_MS;
  for (let attempt = 1; ; attempt++) {
    /** Waits a little and says true while the deadline allows another attempt. */
    const again = async (): Promise<boolean> => {
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, Math.min(100 * attempt, 1000)));
      return true;
    };
    try {
      return await fn();
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        const message = err.cause?.message ?? err.message;
        // A run just started (or continued as new) and has not read its policy yet: ask again shortly.
        if (message === REVIEW_OPENING_REFUSAL && (await again())) continue;
        throw new RefusedError(`${what} refused: ${message}`);
      }
      if (!isMissing(err)) throw err;
      // NOT_FOUND: no such review, or its run has closed (an Update to a closed run is refused by the server); a
      // run that closed by continuing as new has a successor, which takes the Update.
      const running = await client.workflow
        .getHandle(reviewId)
        .describe()
        .then((d) => d.status.name === 'RUNNING')
        .catch(() => null);
      if (running === true && (await again())) continue;
      if (running !== null) throw new RefusedError(`${what} refused: review ${reviewId} is closed`);
      throw new NotFoundError(`no review ${reviewId}`);
    }
  }
}

/** Takes what `audit export` shows now into an open weekly review. */
export async function refreshReview(
  client: Client,
  reviewId: string,
  candidates: readonly ReviewCandidate[],
): Promise<ReviewStatus> {
  return update(client, 'refresh', reviewId, () =>
    client.workflow.getHandle(reviewId).executeUpdate(reviewRefreshUpdate, { args: [[...candidates]] }),
  );
}

/**
 * Marks one proposal of a review as a reviewer. `proposal` is a proposal_id or a workflow id, resolved against
 * the review's own candidates. With `key`, the mark is signed (required when the policy lists a key for you).
 */
export async function markReview(
  client: Client,
  reviewId: string,
  input: { proposal: string; mark: string; should_be?: string; reviewer: string; note?: string },
  { key }: { key?: KeyFile } = {},
): Promise<ReviewStatus> {
  const review = await reviewStatus(client, reviewId);
  if (review.state === 'closed') throw new RefusedError(`mark refused: review ${reviewId} is closed`);
  const found = review.candidates.find((c) => c.workflow_id === input.proposal || c.proposal_id === input.proposal);
  const parsed = ReviewMarkSchema.safeParse({
    workflow_id: found?.workflow_id ?? input.proposal,
    mark: input.mark,
    should_be: input.should_be,
    reviewer: input.reviewer,
    note: input.note,
  });
  if (!parsed.success) throw new BadInputError(describeIssues('mark', parsed.error.issues));
  const mark: ReviewMark = key ? signReviewMark(reviewId, parsed.data, key) : parsed.data;
  return update(client, 'mark', reviewId, () =>
    client.workflow.getHandle(reviewId).executeUpdate(reviewMarkUpdate, { args: [mark] }),
  );
}

/** Closes a review (a weekly review takes `candidates` in first); returns it with its rates. */
export async function closeReview(
  client: Client,
  reviewId: string,
  candidates: readonly ReviewCandidate[] | null,
): Promise<ReviewStatus> {
  return update(client, 'close', reviewId, () =>
    client.workflow
      .getHandle(reviewId)
      .executeUpdate(reviewCloseUpdate, { args: [candidates === null ? null : [...candidates]] }),
  );
}

/** What `review status --verify` found. */
export interface ReviewVerification {
  /** The sample re-derived from the recorded seed and candidates equals the recorded one. */
  sample_matches: boolean;
  expected_sample: string[];
  /** Proposals a fresh `audit export` shows for the period that the review does not hold (null: not checked). */
  missing_candidates: string[] | null;
  /** Proposals the review holds that a fresh export does not show as belonging (null: not checked). */
  unexpected_candidates: string[] | null;
  ok: boolean;
}

/**
 * Re-derives a review's sample from what it recorded, with an independent HMAC implementation (node:crypto),
 * and, given a fresh export of the period, checks that the recorded candidates are the real ones.
 */
export function verifyReview(review: ReviewStatus, fresh: readonly ReviewCandidate[] | null): ReviewVerification {
  const ids = review.candidates.map((c) => c.workflow_id);
  let expected = ids;
  if (review.kind === 'spot-check') {
    const score = (id: string) => createHmac('sha256', review.seed).update(id, 'utf8').digest('hex');
    const scored = [...new Set(ids)].map((id) => ({ id, s: score(id) }));
    scored.sort((a, b) => (a.s < b.s ? -1 : a.s > b.s ? 1 : a.id < b.id ? -1 : 1));
    expected = scored.slice(0, sampleSize(scored.length, review.share)).map((x) => x.id);
  }
  const sameSet = (a: readonly string[], b: readonly string[]) =>
    a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');
  const sample_matches = sameSet(expected, review.in_review);
  let missing: string[] | null = null;
  let unexpected: string[] | null = null;
  if (fresh) {
    const start = Date.parse(review.range.start);
    const end = Date.parse(review.range.end);
    const opened = Date.parse(review.opened_at);
    const belonging = fresh.filter((c) => {
      const t = Date.parse(c.started_at);
      return t >= start && t < end && belongsInReview(review.kind, c);
    });
    const held = new Set(ids);
    const now = new Set(belonging.map((c) => c.workflow_id));
    // A spot-check holds what its month's APPROVEs were when it opened; a weekly review what they were at its
    // last refresh. A proposal decided later is not missing.
    const refreshed = Date.parse(review.kind === 'weekly' ? review.refreshed_at : review.opened_at) || opened;
    missing = belonging
      .filter((c) => !held.has(c.workflow_id) && Date.parse(c.started_at) < refreshed)
      .map((c) => c.workflow_id);
    unexpected = ids.filter((id) => !now.has(id));
  }
  return {
    sample_matches,
    expected_sample: expected,
    missing_candidates: missing,
    unexpected_candidates: unexpected,
    ok: sample_matches && (missing?.length ?? 0) === 0 && (unexpected?.length ?? 0) === 0,
  };
}

/** One review as `list` shows it, with its memo. */
export interface ListedReview {
  review_id: string;
  running: boolean;
  memo: ReviewMemo | null;
}

/** Every review in the namespace (newest first), read from visibility with its memo: no history fetch. */
export async function listReviews(client: Client): Promise<ListedReview[]> {
  const out: ListedReview[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowType = '${REVIEW_WORKFLOW_TYPE}'` })) {
    const memo = (wf.memo?.[REVIEW_MEMO_KEY] as ReviewMemo | undefined) ?? null;
    out.push({ review_id: wf.workflowId, running: wf.status.name === 'RUNNING', memo });
  }
  return out;
}

/** The review figures the metrics and reports use: from closed reviews only. */
export interface ReviewFigures {
  /** Closed weekly reviews: REJECTs marked wrong / REJECTs marked (null without marks). */
  falseNegativeRate: number | null;
  rejectsMarked: number;
  /** Closed spot-checks: APPROVEs marked wrong / APPROVEs marked (null without marks). */
  falseApprovalRate: number | null;
  approvesMarked: number;
  /** The last ended ISO week with no closed weekly review a week after it ended, or null. */
  overdueWeeklyReview: string | null;
}

/**
 * The false-negative and false-approval rates over closed reviews whose period ended within `sinceMs` (all when
 * undefined), and the overdue weekly review, from the reviews' memos.
 */
export function reviewFigures(reviews: readonly ListedReview[], nowMs = Date.now(), sinceMs?: number): ReviewFigures {
  let rm = 0;
  let rw = 0;
  let am = 0;
  let aw = 0;
  const closedWeeks: string[] = [];
  for (const r of reviews) {
    const m = r.memo;
    if (!m || m.state !== 'closed') continue;
    if (m.kind === 'weekly') closedWeeks.push(m.period);
    if (sinceMs !== undefined && periodRange(m.kind, m.period).end < nowMs - sinceMs) continue;
    if (m.kind === 'weekly') {
      rm += m.rejects_marked;
      rw += m.rejects_wrong;
    } else {
      am += m.approves_marked;
      aw += m.approves_wrong;
    }
  }
  return {
    falseNegativeRate: rm > 0 ? rw / rm : null,
    rejectsMarked: rm,
    falseApprovalRate: am > 0 ? aw / am : null,
    approvesMarked: am,
    overdueWeeklyReview: overdueWeeklyReview(nowMs, closedWeeks),
  };
}

/**
 * When the last review of each kind closed, read from the reviews' memos (visibility), so the
 * overdue-review gauge survives worker restarts (`startVisibilityGauges({ lastReviewClosed })`).
 */
export async function lastReviewClosed(client: Client): Promise<{ weekly?: Date; spot_check?: Date }> {
  const out: { weekly?: Date; spot_check?: Date } = {};
  for (const r of await listReviews(client)) {
    const closedAt = r.memo?.closed_at ? new Date(r.memo.closed_at) : null;
    if (!closedAt || Number.isNaN(closedAt.getTime())) continue;
    const kind = r.memo?.kind === 'weekly' ? 'weekly' : 'spot_check';
    if (!out[kind] || out[kind] < closedAt) out[kind] = closedAt;
  }
  return out;
}
