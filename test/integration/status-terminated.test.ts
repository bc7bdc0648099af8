/**
 * `agent-judge list` and `agent-judge audit export` tell the same story about a run that was
 * terminated while it awaited a person: nobody awaits anything any more, so both say `failed`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportAudit } from '../../src/audit';
import { listProposals, submitAndWait } from '../../src/client/proposals';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

let sys: TestSystem;
let proposalId: string;
let workflowId: string;

beforeAll(async () => {
  sys = await startSystem({ spec: { escalation: { timeout: '24h', approvers: ['scott'] } } });
  const p = proposal('financial_op');
  proposalId = String(p.proposal_id);
  const waiting = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
  expect(waiting.status).toBe('awaiting_human');
  workflowId = waiting.workflow_id;
  await sys.client.workflow.getHandle(workflowId).terminate('operator stopped it');
  // Visibility is eventually consistent: wait until the run shows as closed.
  for (let i = 0; i < 80; i++) {
    const rows = await listProposals(sys.client, { sinceMs: 3_600_000 });
    if (rows.some((r) => r.workflow_id === workflowId && r.closed_at !== null)) break;
    await new Promise((r) => setTimeout(r, 250));
  }
});
afterAll(async () => sys?.stop());

describe('a terminated proposal', () => {
  it('is failed in list and in audit export alike', async () => {
    const listed = (await listProposals(sys.client, { sinceMs: 3_600_000 })).find((r) => r.workflow_id === workflowId);
    const exported = [];
    for await (const r of exportAudit(sys.client, { sinceMs: 3_600_000 })) {
      if (r.workflow_id === workflowId) exported.push(r);
    }
    expect(listed).toMatchObject({ proposal_id: proposalId, status: 'failed' });
    expect(listed?.closed_at).not.toBeNull();
    expect(exported).toHaveLength(1);
    expect(exported[0]).toMatchObject({ proposal_id: proposalId, status: 'failed' });
  });

  it('is found by --status failed, not by --status awaiting_human', async () => {
    const failed = await listProposals(sys.client, { sinceMs: 3_600_000, status: 'failed' });
    const awaiting = await listProposals(sys.client, { sinceMs: 3_600_000, status: 'awaiting_human' });
    expect(failed.map((r) => r.workflow_id)).toContain(workflowId);
    expect(awaiting.map((r) => r.workflow_id)).not.toContain(workflowId);
  });
});
