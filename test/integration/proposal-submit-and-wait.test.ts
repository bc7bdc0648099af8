/**
 * `submitAndWait` (what `propose --wait` runs) is one Update-with-Start call; it keeps every
 * guarantee of a plain start: identical content refused whether its run is open or closed, a
 * proposal_id reused by other content refused, and a run that closes before the Update completes
 * reported as that run's outcome, not as a raw gRPC error.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proposalWorkflowId, submitAndWait } from '../../src/client/proposals';
import { parseProposal } from '../../src/contracts/proposal';
import { BadInputError, DuplicateProposalError } from '../../src/contracts/errors';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startSystem({ spec: { escalation: { timeout: '5m', approvers: ['scott'], reminderAt: 0 } } });
});
afterAll(async () => {
  await sys?.stop();
});

const unique = () => ({ justification: `submit-and-wait ${randomUUID()}` });

describe('submitAndWait (Update-with-Start)', () => {
  it('starts the proposal and answers with its outcome', async () => {
    const out = await submitAndWait(sys.client, proposal('memory_write', unique()), {
      taskQueue: sys.taskQueues.workflow,
    });
    expect(out.status).toBe('executed');
    expect(out.verdict).toMatchObject({ verdict: 'APPROVE', decided_by: 'policy' });
  });

  it('refuses identical content under a new proposal_id, while its run is open and after it closed', async () => {
    const open = proposal('financial_op', unique());
    expect((await submitAndWait(sys.client, open, { taskQueue: sys.taskQueues.workflow })).status).toBe(
      'awaiting_human',
    );
    await expect(
      submitAndWait(sys.client, { ...open, proposal_id: randomUUID() }, { taskQueue: sys.taskQueues.workflow }),
    ).rejects.toBeInstanceOf(DuplicateProposalError);

    const closed = proposal('memory_write', unique());
    expect((await submitAndWait(sys.client, closed, { taskQueue: sys.taskQueues.workflow })).status).toBe('executed');
    await expect(
      submitAndWait(sys.client, { ...closed, proposal_id: randomUUID() }, { taskQueue: sys.taskQueues.workflow }),
    ).rejects.toThrow(/an identical proposal was already submitted \(proposal-[0-9a-f]{32}\)/);
  });

  it('refuses a proposal_id already used by different content, and starts nothing', async () => {
    const first = proposal('memory_write', unique());
    await submitAndWait(sys.client, first, { taskQueue: sys.taskQueues.workflow });
    const other = { ...first, ...unique() };
    await expect(submitAndWait(sys.client, other, { taskQueue: sys.taskQueues.workflow })).rejects.toBeInstanceOf(
      BadInputError,
    );
    const otherId = proposalWorkflowId(parseProposal(other));
    await expect(sys.client.workflow.getHandle(otherId).describe()).rejects.toThrow(/not found/i);
  });

  it('reports a run that closes before the Update completes as that run failing', async () => {
    // No worker polls this queue: the Update waits, then the run is terminated under it.
    const p = proposal('memory_write', unique());
    const workflowId = proposalWorkflowId(parseProposal(p));
    const waiting = submitAndWait(sys.client, p, { taskQueue: `nobody-${randomUUID()}` });
    const settled = waiting.then(
      (outcome) => ({ outcome }),
      (error: unknown) => ({ error }),
    );
    for (;;) {
      try {
        await sys.client.workflow.getHandle(workflowId).describe();
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    await sys.client.workflow.getHandle(workflowId).terminate('operator stopped it');
    const result = await settled;
    expect('error' in result && String(result.error)).toMatch(
      new RegExp(`proposal workflow ${workflowId} failed: operator stopped it`),
    );
  });
});
