/**
 * The judge against a scripted loopback Ollama server, through the real `ollama` client and real
 * HTTP: request shape, audit fields, the retry on invalid output, and every failure path ending in
 * confidence 0 (never an approval, never a throw).
 */
import { Ollama } from 'ollama';
import { afterEach, describe, expect, it } from 'vitest';
import { VerdictSchema, type Verdict } from '../../src/contracts/verdict';
import { createJudgeDepsFromEnv, judgeProposal } from '../../src/judge';
import { MODEL_ANSWER_JSON_SCHEMA } from '../../src/judge/model';
import {
  answerJson,
  closedPortHost,
  garbageModel,
  slowModel,
  startFakeOllama,
  type FakeOllama,
} from '../helpers/fake-ollama';
import { judgePolicy, prProposal, tempBaseDir } from '../helpers/judge-fixtures';

let fake: FakeOllama | undefined;
afterEach(async () => {
  try {
    fake?.assertDone();
  } finally {
    await fake?.close();
    fake = undefined;
  }
});

async function judgeWith(host: string, opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Verdict> {
  const baseDir = tempBaseDir();
  const policy = await judgePolicy(baseDir, {
    model: 'judge-test:latest',
    host,
    timeoutMs: opts.timeoutMs ?? 5_000,
    seed: 7,
  });
  const deps = { baseDir, ...createJudgeDepsFromEnv(policy, opts.env ?? {}) };
  const verdict = await judgeProposal({ proposal: prProposal(), tier: 'full-judge-review', round: 0, policy }, deps);
  return VerdictSchema.parse(verdict);
}

describe('judge model over the Ollama wire protocol', () => {
  it('sends one non-streaming chat: JSON Schema format, temperature 0, seed, system + user and block', async () => {
    fake = await startFakeOllama({
      script: [{ content: answerJson('APPROVE', 0.9, 'matches issue #42'), promptTokens: 812, completionTokens: 37 }],
    });
    const v = await judgeWith(fake.host);
    const call = fake.calls[0]!;
    expect(call).toMatchObject({ model: 'judge-test:latest', stream: false, options: { temperature: 0, seed: 7 } });
    expect(call.format).toEqual(MODEL_ANSWER_JSON_SCHEMA);
    expect(call.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(call.messages[1]!.content).toContain('<proposal_json>');
    expect(v).toMatchObject({ verdict: 'APPROVE', decided_by: 'judge', confidence: 0.72 });
    expect(v.judge).toMatchObject({
      model: 'judge-test:latest',
      prompt_tokens: 812,
      completion_tokens: 37,
      raw_answer: answerJson('APPROVE', 0.9, 'matches issue #42'),
    });
    expect(v.judge!.prompt_hash).toMatch(/^sha256:/);
    expect(v.judge!.latency_ms).toBeGreaterThan(0);
  });

  it('sends the API key from the environment as a Bearer token', async () => {
    fake = await startFakeOllama({ script: [{ content: answerJson('APPROVE', 0.9) }] });
    await judgeWith(fake.host, { env: { OLLAMA_API_KEY: 'k-123' } });
    expect(fake.headers[0]!.authorization).toBe('Bearer k-123');
  });

  it('retries invalid output once with the validation error, then uses the valid answer', async () => {
    fake = await startFakeOllama({
      script: [{ content: 'I approve!' }, { content: answerJson('REJECT', 0.8, 'wrong files') }],
    });
    const v = await judgeWith(fake.host);
    expect(fake.calls).toHaveLength(2);
    const retry = fake.calls[1]!.messages;
    expect(retry.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(retry[3]!.content).toMatch(/not valid: the answer is not JSON/);
    expect(v).toMatchObject({ verdict: 'REJECT', confidence: 0.64, decided_by: 'judge' });
  });

  it('invalid output twice -> confidence 0, CLARIFY, the error and raw answer in the audit', async () => {
    fake = await startFakeOllama({ respond: garbageModel });
    const v = await judgeWith(fake.host);
    expect(fake.calls).toHaveLength(2);
    expect(v).toMatchObject({ verdict: 'CLARIFY', confidence: 0, rule: 'judge.failure' });
    expect(v.constraints.require_human_review).toBe(true);
    expect(v.judge).toMatchObject({
      // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- vitest types matchers as any
      error: expect.stringMatching(/^invalid model output twice/),
      raw_answer: 'Sure! I think this proposal is APPROVED :)',
    });
  });

  it('a model slower than the budget -> confidence 0 within the budget', async () => {
    fake = await startFakeOllama({ respond: slowModel(5_000) });
    const started = performance.now();
    const v = await judgeWith(fake.host, { timeoutMs: 300 });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(v).toMatchObject({
      verdict: 'CLARIFY',
      confidence: 0,
      judge: { error: 'the model did not answer within 300 ms' },
    });
  });

  it('an unreachable model counts as no model: withoutModel (default escalate), confidence 0', async () => {
    const v = await judgeWith(await closedPortHost());
    expect(v).toMatchObject({ verdict: 'CLARIFY', confidence: 0, rule: 'judge.no-model.escalate' });
    expect(v.escalation?.reason).toContain('is not there: the model could not be reached');
    expect(v.judge!.error).toMatch(/could not be reached/);
  });

  it('an Ollama error reply (non-2xx {error}) -> confidence 0 with the server message', async () => {
    fake = await startFakeOllama({
      script: [{ status: 404, error: 'model "judge-test:latest" not found, try pulling it first' }],
    });
    const v = await judgeWith(fake.host);
    expect(v).toMatchObject({
      confidence: 0,
      judge: { error: 'the model server answered HTTP 404: model "judge-test:latest" not found, try pulling it first' },
    });
  });

  it('the fake speaks streaming NDJSON too (checked with the real client)', async () => {
    fake = await startFakeOllama({
      script: [{ content: answerJson('APPROVE', 0.5, 'a long enough reason to span several chunks') }],
    });
    const stream = await new Ollama({ host: fake.host }).chat({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    let text = '';
    let last;
    for await (const part of stream) {
      text += part.message.content;
      last = part;
    }
    expect(JSON.parse(text)).toMatchObject({ verdict: 'APPROVE' });
    expect(last).toMatchObject({ done: true, eval_count: 42 });
  });

  it('a scripted fake reports an unexpected call and an unused answer', async () => {
    const strict = await startFakeOllama({ script: [] });
    await judgeWith(strict.host);
    expect(() => strict.assertDone()).toThrow(/unexpected call #1/);
    await strict.close();
    const leftover = await startFakeOllama({ script: [{ content: answerJson('APPROVE', 1) }] });
    expect(() => leftover.assertDone()).toThrow(/1 scripted answer\(s\) never used/);
    await leftover.close();
  });
});
