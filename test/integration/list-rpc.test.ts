/**
 * `agent-judge list` reads visibility over the read-only gRPC path (src/client/status-rpc.ts) instead of the SDK
 * client, so it starts fast: both paths give the same rows for the same filters (one query, one row shape), against
 * the real dev server, over proposals in every status a list can show, and refuse bad filters with the same words.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { listProposals, submitAndWait, submitProposal } from '../../src/client/proposals';
import { listProposalsOverRpc } from '../../src/client/status-rpc';
import { temporalTargetLazily, type TemporalTarget } from '../../src/client/target';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

let sys: TestSystem;
let target: TemporalTarget;
beforeAll(async () => {
  sys = await startSystem({ spec: { escalation: { approvers: ['scott'], timeout: '10m' } } });
  target = await temporalTargetLazily({ address: inject('temporalAddress'), namespace: inject('temporalNamespace') });
  const taskQueue = sys.taskQueues.workflow;
  // executed, approved (awaiting its token's redemption), rejected, awaiting a person, and one terminated (failed).
  await submitAndWait(sys.client, proposal('memory_write'), { taskQueue });
  await submitAndWait(sys.client, proposal('vault_note_create'), { taskQueue });
  await submitAndWait(sys.client, proposal('issue_comment', { parameters: { body: 'key AKIAABCDEFGHIJKLMNOP' } }), {
    taskQueue,
  });
  await submitAndWait(sys.client, proposal('exec'), { taskQueue });
  const stopped = await submitProposal(sys.client, proposal('exec'), { taskQueue });
  await sys.client.workflow.getHandle(stopped.workflow_id).terminate('test: stopped');
});
afterAll(async () => sys?.stop());

describe('list over gRPC and over the SDK client', () => {
  it('gives the same rows for every filter', async () => {
    const taskQueue = sys.taskQueues.workflow;
    // Visibility is eventually consistent: wait until the SDK path sees all five, then compare.
    for (let i = 0; i < 40 && (await listProposals(sys.client, { taskQueue })).length < 5; i++) {
      await new Promise((r) => setTimeout(r, 250));
    }
    const filters = [
      {},
      { status: 'executed' },
      { status: 'approved' },
      { status: 'rejected' },
      { status: 'awaiting_human' },
      { status: 'failed' },
      { status: 'pending' },
      { sinceMs: 3_600_000 },
      { sinceMs: 1 },
      { auditFlag: true },
      { limit: 2 },
    ];
    const statuses = new Set<string>();
    for (const filter of filters) {
      const sdk = await listProposals(sys.client, { ...filter, taskQueue });
      const rpc = await listProposalsOverRpc(target, { ...filter, taskQueue });
      expect(rpc, JSON.stringify(filter)).toEqual(sdk);
      for (const row of sdk) statuses.add(row.status);
    }
    // The comparison covered every kind of row, not five empty lists.
    expect([...statuses].sort()).toEqual(['approved', 'awaiting_human', 'executed', 'failed', 'rejected']);
  });

  it('refuses a bad filter with the same words', async () => {
    const words =
      '--status: expected one of executed, approved, rejected, awaiting_clarification, awaiting_human, failed, ' +
      'uncertain, pending';
    await expect(listProposalsOverRpc(target, { status: 'done' })).rejects.toThrow(words);
    await expect(listProposals(sys.client, { status: 'done' })).rejects.toThrow(words);
    await expect(listProposalsOverRpc(target, { taskQueue: "q' OR 1=1" })).rejects.toThrow(/^taskQueue: expected/);
  });
});
