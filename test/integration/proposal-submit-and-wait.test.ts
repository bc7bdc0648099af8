/**
 * `submitAndWait` (what `propose --wait` runs) is one Update-with-Start call; it keeps every
 * guarantee of a plain start: identical content refused whether its run is open or closed, a
 * proposal_id reused by other content refused, and a run that closes before the Update completes
 * reported as that run's outcome, not as a raw gRPC error.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  findWorkflowId,
  getStatus,
  proposalWorkflowId,
  submitAndWait,
  submitProposal,
} from '../../src/client/proposals';
import { PROPOSAL_ID_RESERVATION_PREFIX, SA, statusQuery } from '../../src/names';
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

  it('refuses a proposal_id already used by different content, and performs nothing of it', async () => {
    const first = proposal('memory_write', unique());
    await submitAndWait(sys.client, first, { taskQueue: sys.taskQueues.workflow });
    const other = { ...first, ...unique() };
    await expect(submitAndWait(sys.client, other, { taskQueue: sys.taskQueues.workflow })).rejects.toBeInstanceOf(
      BadInputError,
    );
    // Its run started beside the reservation and was withdrawn: refused, never executed, and no longer named by the
    // proposal_id (docs/performance.md §6).
    const otherId = proposalWorkflowId(parseProposal(other));
    const run = sys.client.workflow.getHandle(otherId);
    const described = await run.describe();
    expect(described.status.name).toBe('FAILED');
    expect(described.typedSearchAttributes.get(SA.ProposalId)).toBeUndefined();
    expect(await run.query(statusQuery)).toMatchObject({
      status: 'rejected',
      execution: null,
      verdict: { verdict: 'REJECT', rule: 'proposal_id.taken' },
    });
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

describe('a proposal named by its content (no proposal_id given)', () => {
  /** The proposal without its proposal_id. */
  const unnamed = (type: string) => {
    const { proposal_id: _given, ...rest } = proposal(type, unique());
    return rest;
  };
  const reservationOf = (id: string) =>
    sys.client.workflow.getHandle(`${PROPOSAL_ID_RESERVATION_PREFIX}${id}`).describe();

  it('takes its workflow id as proposal_id, needs no reservation, and is found by it without a lookup', async () => {
    const p = unnamed('memory_write');
    const out = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    expect(out.status).toBe('executed');
    expect(out.proposal_id).toBe(out.workflow_id);
    expect(out.workflow_id).toBe(proposalWorkflowId(parseProposal({ ...p, proposal_id: 'x' })));
    // No reservation was started for it: the workflow id is what keeps it unique.
    await expect(reservationOf(out.proposal_id)).rejects.toThrow(/not found/i);
    expect((await getStatus(sys.client, out.proposal_id)).proposal.proposal_id).toBe(out.workflow_id);
    // The same content again, named or not, is the identical proposal: refused as a resubmission.
    await expect(submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow })).rejects.toBeInstanceOf(
      DuplicateProposalError,
    );
    await expect(
      submitProposal(sys.client, { ...p, proposal_id: randomUUID() }, { taskQueue: sys.taskQueues.workflow }),
    ).rejects.toBeInstanceOf(DuplicateProposalError);
  });

  it("refuses a content-name form that names other content, naming the field and the proposal's own name", async () => {
    const taken = await submitProposal(sys.client, unnamed('memory_write'), { taskQueue: sys.taskQueues.workflow });
    const other = unnamed('memory_write');
    const otherId = proposalWorkflowId(parseProposal({ ...other, proposal_id: 'x' }));
    for (const id of [taken.workflow_id, `mcp-${taken.workflow_id.slice('proposal-'.length)}`]) {
      const err = await submitProposal(
        sys.client,
        { ...other, proposal_id: id },
        {
          taskQueue: sys.taskQueues.workflow,
        },
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BadInputError);
      expect(String(err)).toContain(`proposal.proposal_id: ${id} has a form kept for names derived`);
      expect(String(err)).toContain(`use ${otherId}`);
    }
    // Nothing started for the refused content; the named one is untouched.
    await expect(sys.client.workflow.getHandle(otherId).describe()).rejects.toThrow(/not found/i);
    expect(await findWorkflowId(sys.client, taken.proposal_id)).toBe(taken.workflow_id);
  });

  it("the MCP proxy's mcp-<hex> form names the workflow of the same digest, without a reservation", async () => {
    const p = unnamed('memory_write');
    const workflowId = proposalWorkflowId(parseProposal({ ...p, proposal_id: 'x' }));
    const mcpName = `mcp-${workflowId.slice('proposal-'.length)}`;
    const out = await submitAndWait(sys.client, { ...p, proposal_id: mcpName }, { taskQueue: sys.taskQueues.workflow });
    expect(out).toMatchObject({ proposal_id: mcpName, workflow_id: workflowId, status: 'executed' });
    await expect(reservationOf(mcpName)).rejects.toThrow(/not found/i);
    expect(await findWorkflowId(sys.client, mcpName)).toBe(workflowId);
  });
});
