/**
 * One workflow per audit review period (seed 000 §6 audit cadence): `review-weekly-2026-W48`,
 * `review-spot-check-2026-11`. It records what it reviews (the candidates `audit export` showed and,
 * for a spot-check, a secret seed drawn here and the sample it selects), accepts signed marks from
 * the policy's reviewers through an Update whose synchronous validator refuses everything else, and
 * closes with the false-negative / false-approval figures (its result, and its memo for metrics).
 * The function registers handlers and waits; ReviewState decides.
 */
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { z } from 'zod';
import type { WorkflowActivities } from '../activities/types';
import { FailureType } from '../contracts/lifecycle';
import {
  periodRange,
  refusePeriod,
  ReviewCandidateSchema,
  ReviewInputSchema,
  ReviewMarkSchema,
  reviewWorkflowId,
  type ReviewSnapshot,
} from '../contracts/review';
import { describeIssues } from '../contracts/zod-error';
import { REVIEW_MEMO_KEY, reviewCloseUpdate, reviewMarkUpdate, reviewRefreshUpdate, reviewStatusQuery } from '../names';
import { readUpdateInput } from './proposal-state';
import { ReviewState } from './review-state';
import { countClosedReview } from './metrics';

const local = proxyLocalActivities<WorkflowActivities>({ startToCloseTimeout: '10s' });

const CandidatesSchema = z.array(ReviewCandidateSchema).max(20_000);

export async function reviewWorkflow(input: unknown): Promise<ReviewSnapshot> {
  const parsed = ReviewInputSchema.safeParse(input);
  if (!parsed.success)
    throw ApplicationFailure.nonRetryable(describeIssues('review', parsed.error.issues), FailureType.BadInput);
  const { kind, period, candidates } = parsed.data;
  const bad = refusePeriod(kind, period);
  if (bad) throw ApplicationFailure.nonRetryable(bad, FailureType.BadInput);
  const id = workflowInfo().workflowId;
  if (id !== reviewWorkflowId(kind, period))
    throw ApplicationFailure.nonRetryable(
      `workflow id ${id} is not the id of the ${kind} review of ${period} (${reviewWorkflowId(kind, period)})`,
      FailureType.BadInput,
    );
  // A spot-check draws its sample once: from a month still running, later APPROVEs could never be picked.
  if (kind === 'spot-check' && Date.now() < periodRange(kind, period).end)
    throw ApplicationFailure.nonRetryable(
      `month ${period} has not ended: a spot-check samples a whole month, open it after the month`,
      FailureType.BadInput,
    );

  const now = () => new Date(Date.now()).toISOString();
  let current: ReviewState | undefined;
  const ready = (): ReviewState => {
    if (!current) throw new Error('the review is still opening; try again in a moment');
    return current;
  };
  const publish = (s: ReviewState) => upsertMemo({ [REVIEW_MEMO_KEY]: s.memo() });

  setHandler(reviewStatusQuery, () => ready().snapshot());
  setHandler(
    reviewMarkUpdate,
    (raw) => {
      const s = ready();
      s.addMark(readUpdateInput(ReviewMarkSchema, 'mark', raw), now());
      publish(s);
      return s.snapshot();
    },
    {
      // Synchronous: a refused mark is never written to history and changes nothing.
      validator: (raw) => {
        const m = readUpdateInput(ReviewMarkSchema, 'mark', raw);
        const refusal = ready().refuseMark(m, Date.now());
        if (refusal) throw new Error(refusal);
      },
    },
  );
  setHandler(
    reviewRefreshUpdate,
    (raw) => {
      const s = ready();
      s.refresh(readUpdateInput(CandidatesSchema, 'candidates', raw), now());
      publish(s);
      return s.snapshot();
    },
    {
      validator: (raw) => {
        readUpdateInput(CandidatesSchema, 'candidates', raw);
        const refusal = ready().refuseRefresh();
        if (refusal) throw new Error(refusal);
      },
    },
  );
  setHandler(
    reviewCloseUpdate,
    (raw) => {
      const s = ready();
      const fresh = raw === null ? null : readUpdateInput(CandidatesSchema, 'candidates', raw);
      if (fresh && s.refuseRefresh() === null) s.refresh(fresh, now());
      s.close(now(), 'person');
      publish(s);
      return s.snapshot();
    },
    {
      validator: (raw) => {
        if (raw !== null) readUpdateInput(CandidatesSchema, 'candidates', raw);
        const refusal = ready().refuseClose();
        if (refusal) throw new Error(refusal);
      },
    },
  );

  const { policy } = await local.policySnapshot();
  // The seed: 244 random bits from the workflow's randomness, which Temporal seeds per run; drawn after the
  // candidates were fixed (they came with the start), recorded in the result and every status.
  const seed = `${uuid4()}${uuid4()}`.replace(/-/g, '');
  const state = new ReviewState(id, kind, period, policy, seed, candidates, now());
  current = state;
  publish(state);

  // Open until someone closes it, or it closes itself (a defined end for a forgotten review).
  const closed = await condition(() => state.closed, state.autoCloseInMs(Date.now()));
  if (!closed) {
    state.close(now(), 'clock');
    publish(state);
  }
  // The closed review feeds the live metrics (false-negative / false-approval rates, the overdue-review alert):
  // each proposal's latest mark with its verdict. The workflow meter writes no history and skips replays.
  const snapshot = state.snapshot();
  const verdictOf = new Map(snapshot.candidates.map((c) => [c.workflow_id, c.verdict]));
  const latest = new Map(snapshot.marks.map((m) => [m.workflow_id, m.mark]));
  countClosedReview(
    kind === 'weekly' ? 'weekly' : 'spot_check',
    [...latest].flatMap(([id, mark]) => {
      const verdict = verdictOf.get(id);
      return verdict === 'APPROVE' || verdict === 'REJECT' ? [{ verdict, mark }] : [];
    }),
  );
  await condition(allHandlersFinished);
  return state.snapshot();
}
