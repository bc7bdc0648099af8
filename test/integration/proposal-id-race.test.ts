/**
 * One proposal_id, many different proposals sent at the same moment: exactly one is accepted and performed. The
 * others are refused as bad input naming the proposal that holds the id, whether they came through `submitProposal`
 * or `submitAndWait`, and nothing of them is performed (the id is reserved beside each start, and a run whose
 * reservation was refused is withdrawn: docs/performance.md §6); lookups by the proposal_id find the winner only. An
 * identical resubmission of the winner is still refused as a duplicate, not as a proposal_id clash, and a loser's
 * content under an id of its own is accepted.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  findWorkflowId,
  proposalWorkflowId,
  submitAndWait,
  submitProposal,
  waitUntilSettled,
} from '../../src/client/proposals';
import { BadInputError, DuplicateProposalError } from '../../src/contracts/errors';
import { parseProposal } from '../../src/contracts/proposal';
import { PROPOSAL_ID_RESERVATION_PREFIX, PROPOSAL_WORKFLOW_TYPE, SA } from '../../src/names';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startSystem();
});
afterAll(async () => sys?.stop());

/** Proposals started under `proposalId`, by visibility (eventually consistent: polls until it settles). */
async function startedUnder(proposalId: string): Promise<string[]> {
  let ids: string[] = [];
  for (let attempt = 0; attempt < 20; attempt++) {
    ids = [];
    const query = `WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}' AND ${SA.ProposalId.name} = '${proposalId}'`;
    for await (const wf of sys.client.workflow.list({ query })) ids.push(wf.workflowId);
    if (ids.length === 1 && attempt >= 4) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return ids;
}

describe('proposal_id under a race', () => {
  it('of 12 different proposals sent at once under one proposal_id, exactly one starts', async () => {
    const proposalId = `race-${randomUUID().slice(0, 8)}`;
    const store = `engineering.race-${randomUUID().slice(0, 8)}`;
    const inputs = Array.from({ length: 12 }, (_, i) =>
      proposal('memory_write', { proposal_id: proposalId, target: { store }, parameters: { content: `variant ${i}` } }),
    );
    const taskQueue = sys.taskQueues.workflow;
    const results = await Promise.allSettled(
      inputs.map((input, i) =>
        i % 2 === 0
          ? submitProposal(sys.client, input, { taskQueue })
          : submitAndWait(sys.client, input, { taskQueue }),
      ),
    );
    const accepted = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(accepted).toHaveLength(1);
    expect(refused).toHaveLength(11);
    const winner = inputs[results.findIndex((r) => r.status === 'fulfilled')]!;
    const winnerId = proposalWorkflowId(parseProposal(winner));
    for (const r of refused) {
      expect(r.reason).toBeInstanceOf(BadInputError);
      expect((r.reason as Error).message).toBe(
        `proposal.proposal_id: ${proposalId} is already used by another proposal (${winnerId}); ` +
          'give a revision a new proposal_id',
      );
    }
    expect(await startedUnder(proposalId)).toEqual([winnerId]);
    expect(await findWorkflowId(sys.client, proposalId)).toBe(winnerId);
    // Performed once, the winner's content only: no refused run reached the executor's action.
    expect((await waitUntilSettled(sys.client, winnerId)).status).toBe('executed');
    const file = join(sys.policy.spec.memory.dir, `${store}.jsonl`);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { content: string }).content)).toEqual([
      (winner.parameters as { content: string }).content,
    ]);

    // The winner sent again is a duplicate (the actor may not retry), not a proposal_id clash.
    await expect(submitProposal(sys.client, winner, { taskQueue })).rejects.toBeInstanceOf(DuplicateProposalError);
    // One sent later with other content is refused the same way as the racers.
    const late = proposal('memory_write', { proposal_id: proposalId, parameters: { content: 'late' } });
    await expect(submitProposal(sys.client, late, { taskQueue })).rejects.toThrow(
      /is already used by another proposal/,
    );

    // A loser's content under an id of its own: accepted and performed (its withdrawn run does not hold the content).
    const loser = inputs[results.findIndex((r) => r.status === 'rejected')]!;
    const again = await submitAndWait(sys.client, { ...loser, proposal_id: `${proposalId}-b` }, { taskQueue });
    expect(again).toMatchObject({ status: 'executed', workflow_id: proposalWorkflowId(parseProposal(loser)) });
    expect(existsSync(file)).toBe(true);
  });

  it('the reservation ends completed, not timed out, and still holds the id once closed', async () => {
    const proposalId = `closed-${randomUUID().slice(0, 8)}`;
    const taskQueue = sys.taskQueues.workflow;
    const first = proposal('memory_write', { proposal_id: proposalId, parameters: { content: 'first' } });
    const out = await submitAndWait(sys.client, first, { taskQueue });
    expect(out.status).toBe('executed');
    const reservation = sys.client.workflow.getHandle(`${PROPOSAL_ID_RESERVATION_PREFIX}${proposalId}`);
    // The workflow worker runs it after its start delay (off the submission's critical path).
    await expect(reservation.result()).resolves.toBeUndefined();
    const described = await reservation.describe();
    expect(described.status.name).toBe('COMPLETED');
    expect(described.memo).toEqual({ workflow_id: out.workflow_id });
    // Closed, it refuses other content under its id as it did while open; the holder is still found by it.
    const other = proposal('memory_write', { proposal_id: proposalId, parameters: { content: 'other' } });
    await expect(submitAndWait(sys.client, other, { taskQueue })).rejects.toThrow(
      `proposal.proposal_id: ${proposalId} is already used by another proposal (${out.workflow_id})`,
    );
    expect(await findWorkflowId(sys.client, proposalId)).toBe(out.workflow_id);
  });
});
