/**
 * Every wait has a defined outcome: with no judge worker polling at all, a full-judge proposal does
 * not hang in `judging`; it goes to a person with confidence 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getStatus, submitAndWait } from '../../src/client/proposals';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

let sys: TestSystem;
beforeAll(async () => {
  // No judge role; the judge budget and its slack are small, so the schedule-to-close deadline (2 x 1.001 s) is too.
  sys = await startSystem({
    roles: ['workflow', 'executor'],
    spec: {
      judge: { timeoutMs: 1, slackMs: 1000 },
      escalation: { timeout: '5m', approvers: ['scott'], reminderAt: 0 },
    },
  });
});
afterAll(async () => sys?.stop());

describe('judge unreachable', () => {
  it('escalates to a person instead of waiting forever', async () => {
    const p = proposal('exec', { parameters: { command: ['echo', 'nobody judges me'] } });
    const out = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    expect(out.status).toBe('awaiting_human');
    expect(out.verdict).toMatchObject({
      verdict: 'CLARIFY',
      confidence: 0,
      rule: 'judge.unavailable',
      decided_by: 'judge',
    });
    const st = await getStatus(sys.client, String(p.proposal_id));
    expect(st.dispute?.reason).toContain('judge unsure');
  }, 90_000);
});
