import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportAudit, replayProposals } from '../../src/audit';
import { clarify, decide, listProposals, submitAndWait } from '../../src/client/proposals';
import { performApproved, proposal, startSystem, workflowBundle, type TestSystem } from '../helpers/system';

let sys: TestSystem;
const ids: string[] = [];
beforeAll(async () => {
  // About audit replay and export: the clarified PR is approved on the rules alone, asked for explicitly.
  sys = await startSystem({
    spec: { judge: { withoutModel: 'approve' }, escalation: { timeout: '1m', approvers: ['scott'], reminderAt: 0 } },
  });
  const submit = async (p: Record<string, unknown>) => {
    ids.push(String(p.proposal_id));
    return submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
  };
  // One proposal down every main path, so replay exercises each branch of the workflow.
  await submit(proposal('memory_write'));
  // Approved actions the caller performs keep their run open until their token is redeemed: redeem them.
  await performApproved(sys, await submit(proposal('vault_note_create')));
  await submit(proposal('exec', { parameters: { command: ['rm', 'x'] } }));
  const c = proposal('forgejo_pr_create', { cited_evidence: [] });
  await submit(c);
  const clarified = await clarify(sys.client, String(c.proposal_id), {
    cited_evidence: [{ type: 'issue', url: 'https://example.org/i/1' }],
  });
  await performApproved(sys, clarified);
  const h = proposal('financial_op');
  await submit(h);
  await performApproved(
    sys,
    await decide(sys.client, String(h.proposal_id), { decision: 'approve', approver: 'scott', reason: 'budgeted' }),
  );
  // Visibility is eventually consistent: wait until all five show as closed.
  for (let i = 0; i < 40; i++) {
    const closed = await listProposals(sys.client, { sinceMs: 3_600_000 });
    if (closed.filter((r) => ids.includes(r.proposal_id) && r.closed_at !== null).length === ids.length) break;
    await new Promise((r) => setTimeout(r, 250));
  }
});
afterAll(async () => sys?.stop());

describe('audit', () => {
  it('replays every closed proposal against the current workflow code without nondeterminism', async () => {
    const summary = await replayProposals(sys.client, { sinceMs: 3_600_000, workflowBundle: await workflowBundle() });
    expect(summary.replayed).toBeGreaterThanOrEqual(5);
    expect(summary.nondeterministic).toBe(0);
    expect(summary.failed).toBe(0);
    expect(summary.ok).toBe(summary.replayed);
  });

  it('exports one record per proposal with every verdict and the human decision', async () => {
    const records = [];
    for await (const r of exportAudit(sys.client, { sinceMs: 3_600_000 }))
      if (ids.includes(r.proposal_id)) records.push(r);
    expect(records).toHaveLength(5);
    const human = records.find((r) => r.action_type === 'financial_op')!;
    expect(human.status).toBe('approved');
    expect(human.decisions).toEqual([
      expect.objectContaining({ decision: 'approve', approver: 'scott', reason: 'budgeted' }),
    ]);
    const clarified = records.find((r) => r.action_type === 'forgejo_pr_create')!;
    expect(clarified.verdicts.map((v) => v.verdict)).toEqual(['CLARIFY', 'APPROVE']);
    const rejected = records.find((r) => r.action_type === 'exec')!;
    expect(rejected.verdict).toMatchObject({ verdict: 'REJECT', rule: 'exec.allowlist' });
  });
});
