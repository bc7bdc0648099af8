/**
 * The model-backed judge inside the proposal workflow: the policy's confidence thresholds route its
 * verdicts (below 0.3 to a person, below 0.6 to CLARIFY), and a broken model escalates, never
 * approves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getStatus, submitAndWait } from '../../src/client/proposals';
import { createJudgeDepsFromEnv } from '../../src/judge';
import { answerJson, startFakeOllama, type FakeOllama } from '../helpers/fake-ollama';
import { proposal, startSystem, testPolicy, type TestSystem } from '../helpers/system';

let fake: FakeOllama;
let sys: TestSystem;

/** The fake model answers by a marker the test puts in the justification. */
const ANSWERS: Record<string, () => { content: string }> = {
  'MARK-SURE': () => ({ content: answerJson('APPROVE', 0.92, 'echo is harmless and matches the task') }),
  'MARK-UNSURE': () => ({ content: answerJson('APPROVE', 0.45, 'probably fine, not certain') }),
  'MARK-LOST': () => ({ content: answerJson('APPROVE', 0.2, 'cannot tell') }),
  'MARK-GARBAGE': () => ({ content: 'Sure, approved!!' }),
  'MARK-DENY': () => ({ content: answerJson('REJECT', 0.95, 'this does not serve the cited task') }),
};

beforeAll(async () => {
  fake = await startFakeOllama({
    respond: (req) => {
      const text = req.messages.map((m) => m.content).join('\n');
      const mark = Object.keys(ANSWERS).find((m) => text.includes(m));
      if (!mark) throw new Error('unexpected judge call');
      return ANSWERS[mark]!();
    },
  });
  const spec = {
    judge: { model: 'judge-test:latest', host: fake.host, timeoutMs: 5000 },
    clarify: { maxRounds: 2, timeout: '1m' },
    escalation: { timeout: '1m', approvers: ['scott'], reminderAt: 0 },
  };
  const policy = testPolicy('/tmp', spec);
  sys = await startSystem({ spec, judge: createJudgeDepsFromEnv(policy, {}) });
});
afterAll(async () => {
  await sys?.stop();
  await fake?.close();
});

const submitMarked = (mark: string) =>
  submitAndWait(
    sys.client,
    proposal('exec', {
      justification: `Print a marker for the task (${mark}).`,
      parameters: { command: ['echo', mark] },
    }),
    {
      taskQueue: sys.taskQueues.workflow,
    },
  );

describe('model judge in the workflow', () => {
  it('a confident APPROVE executes, decided by the judge, with the audit fields', async () => {
    const out = await submitMarked('MARK-SURE');
    expect(out.status).toBe('executed');
    expect(out.verdict?.decided_by).toBe('judge');
    expect(out.verdict?.judge).toMatchObject({ model: 'judge-test:latest' });
    expect(out.verdict?.judge?.prompt_hash).toMatch(/[0-9a-f]{16,}/);
  });

  it('confidence between the thresholds becomes CLARIFY', async () => {
    const out = await submitMarked('MARK-UNSURE');
    expect(out.status).toBe('awaiting_clarification');
  });

  it('confidence below the human threshold goes to a person with a structured dispute', async () => {
    const out = await submitMarked('MARK-LOST');
    expect(out.status).toBe('awaiting_human');
    const st = await getStatus(sys.client, out.proposal_id);
    expect(st.dispute?.judge_position).toContain('cannot tell');
    expect(st.dispute?.actor_position).toContain('MARK-LOST');
  });

  it('a model answering garbage (twice) is a judge failure: confidence 0, a person decides', async () => {
    const out = await submitMarked('MARK-GARBAGE');
    expect(out.status).toBe('awaiting_human');
    expect(out.verdict).toMatchObject({ confidence: 0, rule: 'judge.failure' });
  });

  it('a confident REJECT is final', async () => {
    const out = await submitMarked('MARK-DENY');
    expect(out.status).toBe('rejected');
    expect(out.verdict?.decided_by).toBe('judge');
  });
});
