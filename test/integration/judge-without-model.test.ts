/**
 * Issue 13: no silent approvals without a judge. A rules-clean full-judge-review proposal that no
 * model reviews (none configured, or the configured one is not there) gets what the policy's
 * `spec.judge.withoutModel` says, through the real workflow on the real Temporal server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, getStatus, submitAndWait } from '../../src/client/proposals';
import { createJudgeDepsFromEnv } from '../../src/judge';
import { resolveJudge } from '../../src/judge/discover';
import { answerJson, closedPortHost, startFakeOllama, type FakeOllama } from '../helpers/fake-ollama';
import { proposal, startSystem, testPolicy, type TestSystem } from '../helpers/system';

const escalation = { timeout: '1m', approvers: ['scott'], reminderAt: 0 };
const submit = (sys: TestSystem, p: Record<string, unknown>) =>
  submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });

describe('spec.judge.withoutModel with no model configured', () => {
  const systems: TestSystem[] = [];
  afterAll(async () => {
    await Promise.all(systems.map((s) => s.stop()));
  });
  const start = async (withoutModel?: string) => {
    const spec = {
      ...(withoutModel ? { judge: { withoutModel } } : {}),
      escalation,
      clarify: { maxRounds: 2, timeout: '1m' },
    };
    const sys = await startSystem({ spec, judge: createJudgeDepsFromEnv(testPolicy('/tmp', spec), {}) });
    systems.push(sys);
    return sys;
  };

  it('the default (escalate): a person decides, and the dispute says no model reviewed it', async () => {
    const sys = await start();
    const p = proposal('exec', { parameters: { command: ['echo', 'hello'] } });
    const out = await submit(sys, p);
    expect(out.status).toBe('awaiting_human');
    expect(out.verdict).toMatchObject({
      verdict: 'CLARIFY',
      confidence: 0,
      decided_by: 'rules',
      rule: 'judge.no-model.escalate',
    });
    const st = await getStatus(sys.client, String(p.proposal_id));
    expect(st.dispute?.reason).toBe('no model reviewed this proposal: no model is configured');
    expect(st.dispute?.judge_position).toContain('no model reviewed this proposal');
    // A person approves it, and only then does it run.
    const decided = await decide(sys.client, String(p.proposal_id), {
      decision: 'approve',
      approver: 'scott',
      reason: 'read it myself',
      via: 'cli',
    });
    expect(decided.status).toBe('executed');
    expect(decided.verdict).toMatchObject({ decided_by: 'human:scott' });
  });

  it('clarify: the agent is asked to clarify, with the reason', async () => {
    const sys = await start('clarify');
    const out = await submit(sys, proposal('exec', { parameters: { command: ['echo', 'hello'] } }));
    expect(out.status).toBe('awaiting_clarification');
    expect(out.verdict).toMatchObject({ verdict: 'CLARIFY', rule: 'judge.no-model.clarify' });
    expect(out.verdict?.reason).toContain('no model reviewed this proposal');
  });

  it('approve: executed on the rules alone, and the verdict says so', async () => {
    const sys = await start('approve');
    const out = await submit(sys, proposal('exec', { parameters: { command: ['echo', 'hello'] } }));
    expect(out.status).toBe('executed');
    expect(out.verdict).toMatchObject({
      verdict: 'APPROVE',
      confidence: 1,
      decided_by: 'rules',
      rule: 'judge.no-model.approve',
    });
    expect(out.verdict?.reason).toContain('no model reviewed this proposal');
  });

  it('a rules REJECT stays a REJECT in every mode (the mode only covers rules-clean proposals)', async () => {
    const sys = systems[0] ?? (await start());
    const out = await submit(sys, proposal('exec', { parameters: { command: ['rm', '-rf', '/'] } }));
    expect(out.status).toBe('rejected');
    expect(out.verdict?.decided_by).toBe('rules');
  });
});

describe('spec.judge.withoutModel when the configured model is not there', () => {
  let sys: TestSystem;
  let fake: FakeOllama;
  beforeAll(async () => {
    // An Ollama that answers, but does not have the model: HTTP 404 "model not found".
    fake = await startFakeOllama({
      script: [{ status: 404, error: 'model "judge-gone" not found, try pulling it first' }],
    });
    const spec = { judge: { model: 'judge-gone', host: fake.host, timeoutMs: 5000 }, escalation };
    sys = await startSystem({ spec, judge: createJudgeDepsFromEnv(testPolicy('/tmp', spec), {}) });
  });
  afterAll(async () => {
    await sys?.stop();
    await fake?.close();
  });

  it('escalates to a person, the dispute naming the model and the cause', async () => {
    const p = proposal('exec', { parameters: { command: ['echo', 'gone'] } });
    const out = await submit(sys, p);
    expect(out.status).toBe('awaiting_human');
    expect(out.verdict).toMatchObject({ confidence: 0, rule: 'judge.no-model.escalate' });
    expect(out.verdict?.judge?.error).toContain('HTTP 404');
    const st = await getStatus(sys.client, String(p.proposal_id));
    expect(st.dispute?.reason).toContain(
      'no model reviewed this proposal: the configured model judge-gone is not there',
    );
    fake.assertDone();
  });
});

describe('finding a model', () => {
  it('uses the policy model an Ollama server at OLLAMA_HOST has, without further settings', async () => {
    const fake = await startFakeOllama({ script: [{ content: answerJson('APPROVE', 0.9, 'echo fits the task') }] });
    const policy = testPolicy('/tmp', {});
    // The fake serves any model name; /api/tags is answered by a tiny wrapper below.
    const tagsFetch: typeof fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (url.endsWith('/api/tags')) {
        return new Response(
          JSON.stringify({ models: [{ name: 'deepseek-v4-pro:cloud', model: 'deepseek-v4-pro:cloud' }] }),
          {
            headers: { 'content-type': 'application/json' },
          },
        );
      }
      return fetch(input, init);
    };
    const found = await resolveJudge(policy, { OLLAMA_HOST: fake.host }, { fetch: tagsFetch });
    expect(found.description).toBe(`rules + model deepseek-v4-pro:cloud found at ${fake.host} (timeout 20000 ms)`);
    const spec = { escalation };
    const sys = await startSystem({ spec, judge: found.deps });
    try {
      const out = await submit(sys, proposal('exec', { parameters: { command: ['echo', 'found'] } }));
      expect(out.status).toBe('executed');
      expect(out.verdict).toMatchObject({ decided_by: 'judge', judge: { model: 'deepseek-v4-pro:cloud' } });
      fake.assertDone();
    } finally {
      await sys.stop();
      await fake.close();
    }
  });

  it('says why no model judges when nothing answers, and what happens instead', async () => {
    const host = await closedPortHost();
    const none = await resolveJudge(testPolicy('/tmp', {}), { OLLAMA_HOST: host });
    expect(none.deps.model).toBeUndefined();
    expect(none.description).toContain(
      `no model: no model is configured, and deepseek-v4-pro:cloud was not found at ${host}`,
    );
    expect(none.description).toContain('spec.judge.withoutModel: escalate: a person decides');
    expect(none.deps.noModelReason).toContain('ECONNREFUSED');
  });
});
