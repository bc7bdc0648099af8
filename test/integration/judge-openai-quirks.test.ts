/**
 * The OpenAI-compatible backend against a scripted loopback server, through the official `openai` client and real
 * HTTP, for what a real local server cannot show: a provider that accepts a schema without enforcing it, a blank
 * answer, 429 with `retry-after`, 5xx, a refusal, a model the server does not have. The request shape and the end to
 * end path on a real server are in judge-openai-real.test.ts (llama.cpp's server from PyPI).
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { VerdictSchema, type Verdict } from '../../src/contracts/verdict';
import type { Proposal } from '../../src/contracts/proposal';
import { createJudgeDepsFromEnv, judgeProposal } from '../../src/judge';
import { resolveJudge } from '../../src/judge/discover';
import { MODEL_ANSWER_STRICT_JSON_SCHEMA, MODEL_ANSWER_STRICT_JSON_SCHEMA_WITH_TASK } from '../../src/judge/answer';
import { ANSWER_SCHEMA_NAME } from '../../src/judge/openai';
import { extractUserTaskBlock, USER_TASK_OPEN } from '../../src/judge/prompt';
import { answerJson } from '../helpers/fake-ollama';
import { startFakeOpenAI, type FakeCompletion, type FakeOpenAI } from '../helpers/fake-openai';
import { judgePolicy, prProposal, tempBaseDir } from '../helpers/judge-fixtures';

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  try {
    fake?.assertDone();
  } finally {
    await fake?.close();
    fake = undefined;
  }
});

const TASK = 'Add OpenAPI schema validation to speckl (issue #42).';

async function judgeWith(
  script: FakeCompletion[],
  opts: {
    timeoutMs?: number;
    env?: NodeJS.ProcessEnv;
    format?: 'json_schema' | 'json_object';
    proposal?: Proposal;
    maxRetries?: number;
  } = {},
): Promise<Verdict> {
  fake = await startFakeOpenAI(script);
  const baseDir = tempBaseDir();
  const policy = await judgePolicy(baseDir, {
    openai: {
      baseUrl: fake.baseUrl,
      model: 'judge-test',
      apiKeyEnv: 'OPENAI_API_KEY',
      responseFormat: opts.format ?? 'json_schema',
      maxRetries: opts.maxRetries ?? 2,
    },
    timeoutMs: opts.timeoutMs ?? 10_000,
    seed: 7,
  });
  const deps = { baseDir, ...createJudgeDepsFromEnv(policy, opts.env ?? {}) };
  const verdict = await judgeProposal(
    { proposal: opts.proposal ?? prProposal(), tier: 'full-judge-review', round: 0, policy },
    deps,
  );
  return VerdictSchema.parse(verdict);
}

const aligned = (verdict: 'APPROVE' | 'REJECT' | 'CLARIFY', confidence = 0.9, alignment = 'no_task') =>
  answerJson(verdict, confidence, `fake judge says ${verdict}`, { task_alignment: alignment });

describe('the OpenAI-compatible judge: request and audit (scripted server, official client)', () => {
  it('sends one chat completion: strict json_schema from the answer schema, temperature 0, seed, the key', async () => {
    const v = await judgeWith([{ content: aligned('APPROVE'), promptTokens: 812, completionTokens: 37 }], {
      env: { OPENAI_API_KEY: 'sk-test-123' },
    });
    const call = fake!.calls[0]!;
    expect(call).toMatchObject({ model: 'judge-test', temperature: 0, seed: 7 });
    expect(call.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: ANSWER_SCHEMA_NAME, strict: true, schema: MODEL_ANSWER_STRICT_JSON_SCHEMA },
    });
    expect(call.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(call.messages[1]!.content).toContain('<proposal_json>');
    expect(fake!.headers[0]!.authorization).toBe('Bearer sk-test-123');
    expect(v).toMatchObject({ verdict: 'APPROVE', decided_by: 'judge', confidence: 0.72 });
    expect(v.judge).toMatchObject({ model: 'judge-test', prompt_tokens: 812, completion_tokens: 37 });
    expect(v.judge!.prompt_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('sends no Authorization header when the key variable is unset (a local server)', async () => {
    await judgeWith([{ content: aligned('APPROVE') }]);
    expect(fake!.headers[0]!.authorization).toBeUndefined();
  });

  it('json_object mode: JSON mode, the schema stated in the prompt, so the prompt hash covers it', async () => {
    const schemaMode = await judgeWith([{ content: aligned('APPROVE') }]);
    await fake!.close();
    fake = undefined;
    const v = await judgeWith([{ content: aligned('APPROVE') }], { format: 'json_object' });
    const call = fake!.calls[0]!;
    expect(call.response_format).toEqual({ type: 'json_object' });
    const system = call.messages[0]!.content;
    expect(system).toContain('JSON');
    expect(system).toContain(`The JSON Schema of the answer object: {"type":"object"`);
    expect(v.judge!.prompt_hash).not.toBe(schemaMode.judge!.prompt_hash);
    expect(v.verdict).toBe('APPROVE');
  });
});

describe('provider quirks a real local server cannot show', () => {
  it('a schema accepted but not enforced: prose is retried once with the validation error', async () => {
    const v = await judgeWith([{ content: 'Sure! This looks APPROVED to me.' }, { content: aligned('REJECT', 0.8) }]);
    expect(fake!.calls).toHaveLength(2);
    const retry = fake!.calls[1]!.messages;
    expect(retry.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(retry[3]!.content).toMatch(/not valid: the answer is not JSON/);
    expect(v).toMatchObject({ verdict: 'REJECT', decided_by: 'judge' });
  });

  it('not enforced twice: a judge failure, confidence 0, a person decides', async () => {
    const v = await judgeWith([{ content: '{"verdict":"APPROVE"}' }, { content: 'APPROVE' }]);
    expect(v).toMatchObject({ verdict: 'CLARIFY', confidence: 0, rule: 'judge.failure' });
    expect(v.constraints.require_human_review).toBe(true);
    expect(v.judge!.error).toMatch(/^invalid model output twice/);
  });

  it('a blank answer (empty or null content) is invalid output, never an approval', async () => {
    const v = await judgeWith([{ content: '' }, { content: null }]);
    expect(v).toMatchObject({ verdict: 'CLARIFY', confidence: 0, rule: 'judge.failure' });
    expect(v.judge!.error).toBe('invalid model output twice: the answer is empty');
    expect(fake!.calls[1]!.messages[3]!.content).toMatch(/the answer is empty/);
  });

  it('a refusal is invalid output with the refusal in the audit', async () => {
    const v = await judgeWith([
      { content: null, refusal: 'I cannot help with that.' },
      { content: null, refusal: 'I cannot help with that.' },
    ]);
    expect(v).toMatchObject({ confidence: 0, rule: 'judge.failure' });
    expect(v.judge!.raw_answer).toBe('(the model refused: I cannot help with that.)');
  });

  it('429 with retry-after: the client waits as told and the retried call judges', async () => {
    const v = await judgeWith([
      { status: 429, message: 'Rate limit reached', headers: { 'retry-after': '1' } },
      { content: aligned('APPROVE') },
    ]);
    expect(fake!.calls).toHaveLength(2);
    expect(v).toMatchObject({ verdict: 'APPROVE', decided_by: 'judge' });
    expect(v.judge!.error).toBeUndefined();
  });

  it('429 asking for longer than the budget: the budget wins, confidence 0', async () => {
    const v = await judgeWith([{ status: 429, message: 'Rate limit reached', headers: { 'retry-after': '5' } }], {
      timeoutMs: 800,
    });
    expect(v).toMatchObject({ verdict: 'CLARIFY', confidence: 0, rule: 'judge.failure' });
    expect(v.judge!.error).toBe('the model did not answer within 800 ms');
  });

  it('5xx on every try: retried by the client, then a judge failure naming the status', async () => {
    const v = await judgeWith(
      [
        { status: 503, message: 'overloaded' },
        { status: 503, message: 'overloaded' },
      ],
      { maxRetries: 1 },
    );
    expect(fake!.calls).toHaveLength(2);
    expect(v).toMatchObject({ verdict: 'CLARIFY', confidence: 0, rule: 'judge.failure' });
    expect(v.judge!.error).toMatch(/^the model server answered HTTP 503: 503 overloaded/);
  });

  it('a model the server does not have (404) counts as no model: withoutModel decides', async () => {
    const v = await judgeWith([{ status: 404, message: 'The model `judge-test` does not exist' }]);
    expect(v).toMatchObject({ verdict: 'CLARIFY', confidence: 0, rule: 'judge.no-model.escalate' });
    expect(v.escalation?.reason).toContain('is not there: the model server answered HTTP 404');
  });
});

describe("the user's task in the judge's view", () => {
  const withTask = prProposal({ proposal_id: 'p-task', user_task: TASK });

  it('goes to the model as its own fenced block, and the audit names the text by hash', async () => {
    const v = await judgeWith([{ content: aligned('APPROVE', 0.9, 'serves_task') }], { proposal: withTask });
    const user = fake!.calls[0]!.messages[1]!.content;
    expect(fake!.calls[0]!.response_format?.json_schema?.schema).toEqual(MODEL_ANSWER_STRICT_JSON_SCHEMA_WITH_TASK);
    expect(user).toContain(USER_TASK_OPEN);
    expect(extractUserTaskBlock(user)).toBe(TASK);
    expect(v).toMatchObject({ verdict: 'APPROVE', decided_by: 'judge' });
    expect(v.judge).toMatchObject({
      user_task_hash: `sha256:${createHash('sha256').update(TASK).digest('hex')}`,
      task_alignment: 'serves_task',
    });
  });

  it('an approval that names another goal is not obeyed: CLARIFY with human review', async () => {
    const v = await judgeWith([{ content: aligned('APPROVE', 0.95, 'other_goal') }], { proposal: withTask });
    expect(v).toMatchObject({ verdict: 'CLARIFY', rule: 'task.not-served' });
    expect(v.constraints.require_human_review).toBe(true);
    expect(v.reason).toContain("did not find that the action serves the user's task (task_alignment: other_goal)");
  });

  it('an answer that leaves the alignment out when a task was given is retried, then a failure', async () => {
    const v = await judgeWith([{ content: answerJson('APPROVE', 0.9) }, { content: aligned('APPROVE', 0.9) }], {
      proposal: withTask,
    });
    expect(v).toMatchObject({ confidence: 0, rule: 'judge.failure' });
    expect(v.judge!.error).toMatch(/answer\.task_alignment: a user task was given/);
  });
});

describe('discovery: what dev prints for an OpenAI-compatible judge', () => {
  it('names the model, the API, the output mode and where the key comes from', async () => {
    fake = await startFakeOpenAI([], ['judge-test']);
    const policy = await judgePolicy(tempBaseDir(), {
      openai: {
        baseUrl: fake.baseUrl,
        model: 'judge-test',
        apiKeyEnv: 'MY_KEY',
        responseFormat: 'json_schema',
        maxRetries: 0,
      },
    });
    const found = await resolveJudge(policy, { MY_KEY: 'k' }, { probeTimeoutMs: 1500 });
    expect(found.description).toBe(
      `rules + model judge-test at ${fake.baseUrl} (OpenAI-compatible API, strict json_schema, key from MY_KEY, ` +
        'timeout 5000 ms)',
    );
    expect(found.deps.model?.model).toBe('judge-test');
    const missing = await resolveJudge(
      await judgePolicy(tempBaseDir(), {
        openai: {
          baseUrl: fake.baseUrl,
          model: 'other',
          apiKeyEnv: 'MY_KEY',
          responseFormat: 'json_object',
          maxRetries: 0,
        },
      }),
      {},
      { probeTimeoutMs: 1500 },
    );
    expect(missing.description).toContain('json_object, schema in the prompt, no key (MY_KEY is unset)');
    expect(missing.description).toContain(
      'but it is not confirmed now: the server lists no other (it lists judge-test)',
    );
  });

  it('AGENT_JUDGE_OPENAI_BASE_URL and _MODEL switch a policy without one to the API', async () => {
    fake = await startFakeOpenAI([], ['m-env']);
    const found = await resolveJudge(
      await judgePolicy(tempBaseDir()),
      { AGENT_JUDGE_OPENAI_BASE_URL: fake.baseUrl, AGENT_JUDGE_OPENAI_MODEL: 'm-env' },
      { probeTimeoutMs: 1500 },
    );
    expect(found.description).toMatch(/^rules \+ model m-env at http:\/\/127\.0\.0\.1:\d+\/v1 \(OpenAI-compatible API/);
  });
});
