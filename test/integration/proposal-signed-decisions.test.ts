import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateIdentity } from '../../src/identity/keys';
import { decide, getStatus, submitAndWait } from '../../src/client/proposals';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

const scott = generateIdentity();
const mallory = generateIdentity();
let sys: TestSystem;
beforeAll(async () => {
  sys = await startSystem({
    spec: {
      escalation: { timeout: '5m', approvers: ['scott'], approverKeys: { scott: scott.public_key }, reminderAt: 0 },
    },
  });
});
afterAll(async () => sys?.stop());

describe('signed decisions in the workflow', () => {
  it('an unsigned or wrongly signed claim to be scott is refused, changes nothing; scott signed approves', async () => {
    const p = proposal('financial_op');
    await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    const id = String(p.proposal_id);
    await expect(decide(sys.client, id, { decision: 'approve', approver: 'scott' })).rejects.toThrow(
      /scott must sign decisions/,
    );
    await expect(decide(sys.client, id, { decision: 'approve', approver: 'scott' }, { key: mallory })).rejects.toThrow(
      /does not verify/,
    );
    expect((await getStatus(sys.client, id)).decisions).toEqual([]);
    const out = await decide(
      sys.client,
      id,
      { decision: 'approve', approver: 'scott', reason: 'budgeted', via: 'cli' },
      { key: scott },
    );
    expect(out.status).toBe('approved');
    expect(out.verdict).toMatchObject({ decided_by: 'human:scott', reason: 'budgeted' });
  });
});
