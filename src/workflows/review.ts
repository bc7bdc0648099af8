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
  continueAsNew,
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
  REVIEW_OPENING_REFUSAL,
  ReviewCandidateSchema,
  ReviewInputSchema,
  ReviewMarkSchema,
  reviewWorkflowId,
  type ReviewStatus,
} from '../contracts/review';
import { describeIssues } from '../contracts/zod-error';
import { REVIEW_MEMO_KEY, reviewCloseUpdate, reviewMarkUpdate, reviewRefreshUpdate, reviewStatusQuery } from '../names';
import { readUpdateInput } from './update-input';
import { refusalFailure } from './refusal';
import { ReviewState } from './review-state';
import { countClosedReview } from './metrics';

const local = proxyLocalActivities<WorkflowActivities>({ startToCloseTimeout: '10s' });

const CandidatesSchema = z.array(ReviewCandidateSchema).max(20_000);

/**
 * A review continues as new when the server suggests it (its history grew long: every mark is an Update) or, at the
 * latest, after this many events, well below Temporal's 51,200-event limit.
 */
export const REVIEW_EVENTS_PER_RUN = 10_000;

export async function reviewWorkflow(input: unknown): Promise<ReviewStatus> {
  const parsed = ReviewInputSchema.safeParse(input);
  if (!parsed.success)
    throw ApplicationFailure.nonRetryable(describeIssues('review', parsed.error.issues), FailureType.BadInput);
  const { kind, period, candidates, carried } = parsed.data;
  // Only the review itself carries state into a run (continue-as-new); a client start with `carried` could forge
  // marks or a seed, so it is refused.
  if (carried && workflowInfo().continuedFromExecutionRunId === undefined)
    throw ApplicationFailure.nonRetryable(
      'carried: only a review continuing as new carries state; start a review without it',
      FailureType.BadInput,
    );
  const bad = refusePeriod(kind, period);
  if (bad) throw refusalFailure(bad);
  const id = workflowInfo().workflowId;
  if (id !== reviewWorkflowId(kind, period))
    throw ApplicationFailure.nonRetryable(
      `workflow id ${id} is not the id of the ${kind} review of ${period} (${reviewWorkflowId(kind, period)})`,
      FailureType.BadInput,
    );
  // A spot-check draws its sample once: from a month still running, later APPROVEs could never be picked.
  if (kind === 'spot-check' && !carried && Date.now() < periodRange(kind, period).end)
    throw ApplicationFailure.nonRetryable(
      `month ${period} has not ended: a spot-check samples a whole month, open it after the month`,
      FailureType.BadInput,
    );

  const now = () => new Date(Date.now()).toISOString();
  let current: ReviewState | undefined;
  const ready = (): ReviewState => {
    if (!current) throw new Error(REVIEW_OPENING_REFUSAL);
    return current;
  };
  const publish = (s: ReviewState) => upsertMemo({ [REVIEW_MEMO_KEY]: s.memo() });

  setHandler(reviewStatusQuery, () => ready().status());
  setHandler(
    reviewMarkUpdate,
    (raw) => {
      const s = ready();
      s.addMark(readUpdateInput(ReviewMarkSchema, 'mark', raw), now());
      publish(s);
      return s.status();
    },
    {
      // Synchronous: a refused mark is never written to history and changes nothing.
      validator: (raw) => {
        const m = readUpdateInput(ReviewMarkSchema, 'mark', raw);
        const refusal = ready().refuseMark(m, Date.now());
        if (refusal) throw refusalFailure(refusal);
      },
    },
  );
  setHandler(
    reviewRefreshUpdate,
    (raw) => {
      const s = ready();
      s.refresh(readUpdateInput(CandidatesSchema, 'candidates', raw), now());
      publish(s);
      return s.status();
    },
    {
      validator: (raw) => {
        readUpdateInput(CandidatesSchema, 'candidates', raw);
        const refusal = ready().refuseRefresh();
        if (refusal) throw refusalFailure(refusal);
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
      return s.status();
    },
    {
      validator: (raw) => {
        if (raw !== null) readUpdateInput(CandidatesSchema, 'candidates', raw);
        const refusal = ready().refuseClose();
        if (refusal) throw refusalFailure(refusal);
      },
    },
  );

  const { policy } = await local.policySnapshot();
  let state: ReviewState;
  if (carried) {
    // A later run of the same review: the seed, marks and times its previous run carried (see continueAsNew below).
    state = ReviewState.resumed(id, kind, period, policy, candidates, carried);
  } else {
    // The seed: 244 random bits from the workflow's randomness, which Temporal seeds per run; drawn after the
    // candidates were fixed (they came with the start), recorded in the result and every status.
    const seed = `${uuid4()}${uuid4()}`.replace(/-/g, '');
    state = new ReviewState(id, kind, period, policy, seed, candidates, now());
  }
  current = state;
  publish(state);

  // Open until someone closes it, or it closes itself (a defined end for a forgotten review). A long history
  // (every mark is an Update) continues as new, carrying the state: the review id stays, handles follow the chain.
  const longHistory = () =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= REVIEW_EVENTS_PER_RUN;
  for (;;) {
    const woke = await condition(() => state.closed || longHistory(), state.autoCloseInMs(Date.now()));
    if (!woke) {
      state.close(now(), 'clock');
      publish(state);
    }
    if (state.closed) break;
    // Marks being applied finish first, so the carried state has them; a close that lands meanwhile wins.
    await condition(allHandlersFinished);
    if (state.closed) break;
    await continueAsNew<typeof reviewWorkflow>({
      kind,
      period,
      candidates: [...state.candidates],
      carried: state.carry(carried?.runs ?? 0),
    });
  }
  // The closed review feeds the live metrics (false-negative / false-approval rates, the overdue-review alert):
  // each proposal's latest mark with its verdict. The workflow meter writes no history and skips replays.
  const status = state.status();
  const verdictOf = new Map(status.candidates.map((c) => [c.workflow_id, c.verdict]));
  const latest = new Map(status.marks.map((m) => [m.workflow_id, m.mark]));
  countClosedReview(
    kind === 'weekly' ? 'weekly' : 'spot_check',
    [...latest].flatMap(([id, mark]) => {
      const verdict = verdictOf.get(id);
      return verdict === 'APPROVE' || verdict === 'REJECT' ? [{ verdict, mark }] : [];
    }),
  );
  await condition(allHandlersFinished);
  return state.status();
}
