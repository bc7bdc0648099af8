import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, getStatus, submitAndWait } from '../../src/client/proposals';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startSystem({
    spec: {
      escalation: { timeout: '1m', approvers: ['scott', 'ana'], quorum: { 'human-only': 2 }, reminderAt: 0 },
      shadow: ['file_write'],
    },
  });
});
afterAll(async () => sys?.stop());

const submit = (p: Record<string, unknown>) => submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });

describe('quorum', () => {
  it('needs two distinct approvals; the first is recorded and the proposal keeps waiting', async () => {
    const p = proposal('financial_op');
    await submit(p);
    const id = String(p.proposal_id);
    const first = await decide(sys.client, id, { decision: 'approve', approver: 'scott', via: 'cli' });
    expect(first.status).toBe('awaiting_human');
    await expect(decide(sys.client, id, { decision: 'approve', approver: 'scott' })).rejects.toThrow(/already decided/);
    const mid = await getStatus(sys.client, id);
    expect(mid.decisions.map((d) => d.approver)).toEqual(['scott']);
    expect(mid.approvals_needed).toBe(2);
    const second = await decide(sys.client, id, { decision: 'approve', approver: 'ana', via: 'cli' });
    expect(second.status).toBe('approved');
    expect(second.verdict?.decided_by).toBe('human:ana');
    expect(second.verdict?.reason).toContain('scott, ana');
  });

  it('a single reject ends it, even after an approval', async () => {
    const p = proposal('financial_op');
    await submit(p);
    const id = String(p.proposal_id);
    await decide(sys.client, id, { decision: 'approve', approver: 'ana' });
    const out = await decide(sys.client, id, { decision: 'reject', approver: 'scott', reason: 'not this month' });
    expect(out.status).toBe('rejected');
    expect(out.verdict).toMatchObject({ decided_by: 'human:scott', reason: 'not this month' });
  });
});

describe('shadow mode', () => {
  it('records the verdict and executes regardless', async () => {
    // No evidence: enforced, this would be a CLARIFY and wait for the actor.
    const p = proposal('file_write', {
      cited_evidence: [],
      target: { path: '.agent-judge/workspace/shadow.txt' },
      parameters: { content: 'shadow\n' },
    });
    const out = await submit(p);
    expect(out.verdict?.verdict).toBe('CLARIFY');
    expect(out.status).toBe('executed');
    expect(out.execution).toMatchObject({ status: 'succeeded', shadow: true });
    expect(readFileSync(join(sys.baseDir, '.agent-judge/workspace/shadow.txt'), 'utf8')).toBe('shadow\n');
  });

  it("still keeps the executor's own guards: a path outside the roots is refused", async () => {
    const out = await submit(proposal('file_write', { target: { path: '/etc/agent-judge-shadow.txt' } }));
    expect(out.verdict?.verdict).toBe('REJECT');
    expect(out.status).toBe('failed');
    expect(out.execution).toMatchObject({ status: 'refused', shadow: true });
  });
});
