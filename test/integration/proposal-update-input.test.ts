/**
 * A malformed Update into a running proposal is refused as `BadInput` (field named) and changes
 * nothing: the handler works with what the validator checked, so the run never sees a ZodError. One
 * the proposal's state refuses is a `BadInput` too, with the refusal's code as its one detail.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, submitAndWait } from '../../src/client/proposals';
import { clarifyUpdate, humanDecisionUpdate, statusQuery } from '../../src/names';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startSystem({ spec: { escalation: { timeout: '24h', approvers: ['scott'] } } });
});
afterAll(async () => sys?.stop());

async function refusal(run: () => Promise<unknown>): Promise<ApplicationFailure> {
  const err = await run().then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (err as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return cause as ApplicationFailure;
}

describe('Update input', () => {
  it('a malformed decision is refused as BadInput naming the field; a valid one then decides', async () => {
    const p = proposal('financial_op');
    const waiting = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    expect(waiting.status).toBe('awaiting_human');
    const handle = sys.client.workflow.getHandle(waiting.workflow_id);

    const bad = await refusal(() =>
      handle.executeUpdate(humanDecisionUpdate, { args: [{ decision: 'maybe', approver: 'scott' } as never] }),
    );
    expect(bad.type).toBe('BadInput');
    expect(bad.message).toMatch(/^decision\.decision: /);
    expect((await handle.query(statusQuery)).stage).toBe('awaiting_human');

    const badClarification = await refusal(() => handle.executeUpdate(clarifyUpdate, { args: [{}] }));
    expect(badClarification.type).toBe('BadInput');

    const notApprover = await refusal(() =>
      handle.executeUpdate(humanDecisionUpdate, { args: [{ decision: 'approve', approver: 'mallory' } as never] }),
    );
    expect(notApprover.type).toBe('BadInput');
    expect(notApprover.message).toBe('mallory is not an approver for this proposal');
    expect(notApprover.details).toEqual(['not-approver']);
    const notWaiting = await refusal(() => handle.executeUpdate(clarifyUpdate, { args: [{ justification: 'more' }] }));
    expect(notWaiting.details).toEqual(['wrong-stage']);
    expect((await handle.query(statusQuery)).stage).toBe('awaiting_human');

    const decided = await decide(sys.client, String(p.proposal_id), { decision: 'reject', approver: 'scott' });
    expect(decided.status).toBe('rejected');
    // The accepted decision carries the defaults its validator applied.
    expect((await handle.query(statusQuery)).decisions).toEqual([
      expect.objectContaining({ decision: 'reject', approver: 'scott', via: 'api' }),
    ]);
  });
});
