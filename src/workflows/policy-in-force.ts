/**
 * The policy in force on one workflow task queue (src/contracts/policy-in-force.ts): workflow workers publish the
 * policy they judge with when they start (an Update-with-Start), and everyone else reads the memo, which needs no
 * worker to answer. Long-lived and small: it continues as new every {@link PUBLICATIONS_PER_RUN} publications, or
 * when Temporal suggests it, carrying the record.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import { applyPublication, refusePublication, type PolicyInForce } from '../contracts/policy-in-force';
import { POLICY_MEMO_KEY, publishPolicyUpdate } from '../names';
import { refusalFailure } from './refusal';

/** Each publication adds an Update and a memo event (a few kilobytes): bounded well below the history limits. */
const PUBLICATIONS_PER_RUN = 100;

export async function policyInForceWorkflow(input: { record?: PolicyInForce | null } = {}): Promise<void> {
  let record = input.record ?? null;
  let published = 0;
  // A continued run states the record again at once: a reader describing the new run sees it.
  if (record) upsertMemo({ [POLICY_MEMO_KEY]: record });
  setHandler(
    publishPolicyUpdate,
    (publication) => {
      const next = applyPublication(record, publication);
      record = next.record;
      published += 1;
      upsertMemo({ [POLICY_MEMO_KEY]: record });
      return next.published;
    },
    {
      // Synchronous and before anything is recorded: a malformed publication changes nothing.
      validator: (publication) => {
        const refusal = refusePublication(publication);
        if (refusal) throw refusalFailure(refusal, 'publishPolicy: ');
      },
    },
  );
  await condition(() => published >= PUBLICATIONS_PER_RUN || workflowInfo().continueAsNewSuggested);
  await condition(allHandlersFinished);
  await continueAsNew<typeof policyInForceWorkflow>({ record });
}
