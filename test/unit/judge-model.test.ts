import { describe, expect, it } from 'vitest';
import {
  askModel,
  MODEL_ANSWER_JSON_SCHEMA,
  parseModelAnswer,
  type ChatMessage,
  type ModelClient,
} from '../../src/judge/model';
import { JudgeSettingsSchema } from '../../src/contracts/judge-settings';
import { createJudgeDepsFromEnv, resolveModelSettings } from '../../src/judge';
import { judgePolicy, tempBaseDir } from '../helpers/judge-fixtures';

const prompt = { system: 'sys', user: 'user', hash: 'sha256:abc' };
const validAnswer = { verdict: 'APPROVE', confidence: 0.8, reason: 'fits the issue' };
const valid = JSON.stringify(validAnswer);

/** An in-process model answering from a script; fails on an extra call or a leftover answer. */
function scripted(answers: Array<string | Error>): ModelClient & { seen: ChatMessage[][]; left: () => number } {
  const queue = [...answers];
  const seen: ChatMessage[][] = [];
  return {
    model: 'scripted',
    seen,
    left: () => queue.length,
    chat(messages) {
      seen.push([...messages]);
      const next = queue.shift();
      if (next === undefined) return Promise.reject(new Error('unexpected model call'));
      if (next instanceof Error) return Promise.reject(next);
      return Promise.resolve({ content: next, promptTokens: 100, completionTokens: 20 });
    },
  };
}

describe('parseModelAnswer', () => {
  it('accepts exactly the verdict object', () => {
    expect(parseModelAnswer(valid)).toEqual({ ok: true, value: validAnswer });
  });
  it('tolerates a code fence and a think preamble', () => {
    expect(parseModelAnswer('```json\n' + valid + '\n```').ok).toBe(true);
    expect(parseModelAnswer('<think>hmm</think>\n' + valid).ok).toBe(true);
  });
  it.each([
    ['prose', 'Sure, APPROVE!', /not JSON/],
    ['an unknown verdict', JSON.stringify({ verdict: 'MAYBE', confidence: 0.5, reason: 'x' }), /answer\.verdict/],
    ['confidence above 1', JSON.stringify({ verdict: 'APPROVE', confidence: 1.5, reason: 'x' }), /answer\.confidence/],
    [
      'an extra key',
      JSON.stringify({ verdict: 'APPROVE', confidence: 0.5, reason: 'x', escalation: null }),
      /escalation/,
    ],
    ['a missing reason', JSON.stringify({ verdict: 'APPROVE', confidence: 0.5 }), /answer\.reason/],
  ])('refuses %s, naming the field', (_what, raw, message) => {
    const r = parseModelAnswer(raw);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.refusal.reason).toMatch(message);
  });
  it('sends the same schema as Ollama format, asking for task_alignment every time', () => {
    expect(MODEL_ANSWER_JSON_SCHEMA).toMatchObject({
      type: 'object',
      required: ['verdict', 'confidence', 'reason', 'task_alignment'],
      additionalProperties: false,
    });
  });
});

describe('the schema the model is asked to follow (Ollama format, the local grammar)', () => {
  type Schema = { properties: Record<string, Schema>; maxItems?: number; maxLength?: number; items?: Schema };
  const constraintsOf = (schema: unknown) => (schema as Schema).properties.constraints!.properties;

  it('bounds the lists and texts a looping model could repeat until the token cap', () => {
    const c = constraintsOf(MODEL_ANSWER_JSON_SCHEMA);
    expect(c.files_only).toMatchObject({ maxItems: 16, items: { maxLength: 256 } });
    expect(c.scope_limit).toMatchObject({ maxLength: 512 });
  });

  it('allows nothing the answer check refuses: its longest answer parses (the check alone allows longer lists)', () => {
    const longest = {
      verdict: 'APPROVE',
      confidence: 1,
      reason: 'r'.repeat(600),
      constraints: {
        files_only: Array.from({ length: 16 }, () => 'f'.repeat(256)),
        max_lines: 1,
        no_existing_code_deletion: true,
        require_human_review: true,
        scope_limit: 's'.repeat(512),
      },
    };
    expect(parseModelAnswer(JSON.stringify(longest)).ok).toBe(true);
    const longer = { ...longest, constraints: { files_only: Array.from({ length: 40 }, (_, i) => `f${i}`) } };
    expect(parseModelAnswer(JSON.stringify(longer)).ok).toBe(true);
  });
});

describe('askModel', () => {
  it('returns the answer with audit fields', async () => {
    const model = scripted([valid]);
    const r = await askModel(model, prompt, { timeoutMs: 1000 });
    expect(r.ok).toBe(true);
    expect(r.audit).toMatchObject({
      model: 'scripted',
      prompt_hash: 'sha256:abc',
      prompt_tokens: 100,
      completion_tokens: 20,
      raw_answer: valid,
    });
    expect(r.audit.error).toBeUndefined();
    expect(model.left()).toBe(0);
  });

  it('retries invalid output once, telling the model what was wrong', async () => {
    const model = scripted(['APPROVE!!', valid]);
    const r = await askModel(model, prompt, { timeoutMs: 1000 });
    expect(r.ok).toBe(true);
    expect(model.seen).toHaveLength(2);
    const retry = model.seen[1]!;
    expect(retry.slice(0, 2)).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'user' },
    ]);
    expect(retry[2]).toEqual({ role: 'assistant', content: 'APPROVE!!' });
    expect(retry[3]?.content).toMatch(/not valid: the answer is not JSON/);
    expect(r.audit).toMatchObject({ prompt_tokens: 200, completion_tokens: 40 });
  });

  it('fails after a second invalid answer, and asks no third time', async () => {
    const model = scripted(['nope', '{"verdict":"APPROVE"}']);
    const r = await askModel(model, prompt, { timeoutMs: 1000 });
    expect(r.ok).toBe(false);
    expect(r.audit.error).toMatch(/^invalid model output twice: answer\.confidence/);
    expect(r.audit.raw_answer).toBe('{"verdict":"APPROVE"}');
    expect(model.left()).toBe(0);
  });

  it('reports a thrown error as a failure instead of throwing', async () => {
    const r = await askModel(scripted([new TypeError('fetch failed')]), prompt, { timeoutMs: 1000 });
    expect(r).toMatchObject({
      ok: false,
      // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- vitest types matchers as any
      audit: { error: expect.stringMatching(/could not be reached: fetch failed/) },
    });
  });

  it('stops at the time budget', async () => {
    const hang: ModelClient = {
      model: 'hang',
      chat: (_m, { signal }) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () =>
            reject(signal.reason instanceof Error ? signal.reason : new Error('aborted')),
          ),
        ),
    };
    const started = Date.now();
    const r = await askModel(hang, prompt, { timeoutMs: 100 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(r).toMatchObject({ ok: false, audit: { error: 'the model did not answer within 100 ms' } });
  });
});

describe('model settings: opt-in', () => {
  it('is off without spec.judge.model and without AGENT_JUDGE_MODEL', async () => {
    const policy = await judgePolicy(tempBaseDir());
    expect(resolveModelSettings(policy, {})).toBeNull();
    expect(createJudgeDepsFromEnv(policy, {}).model).toBeUndefined();
  });

  it('turns on with the policy model, host from the policy before OLLAMA_HOST', async () => {
    const policy = await judgePolicy(tempBaseDir(), { model: 'qwen3:8b', host: 'http://gpu:11434' });
    expect(resolveModelSettings(policy, { OLLAMA_HOST: 'http://other:1' })).toMatchObject({
      model: 'qwen3:8b',
      host: 'http://gpu:11434',
    });
  });

  it('AGENT_JUDGE_MODEL names the model, "on" uses the default, "off" wins over the policy', async () => {
    const none = await judgePolicy(tempBaseDir());
    expect(resolveModelSettings(none, { AGENT_JUDGE_MODEL: 'llama3.2' })?.model).toBe('llama3.2');
    expect(resolveModelSettings(none, { AGENT_JUDGE_MODEL: 'on', OLLAMA_HOST: 'http://h:1' })).toMatchObject({
      model: 'deepseek-v4-pro:cloud',
      host: 'http://h:1',
    });
    const withModel = await judgePolicy(tempBaseDir(), { model: 'qwen3:8b' });
    expect(resolveModelSettings(withModel, { AGENT_JUDGE_MODEL: 'off' })).toBeNull();
    expect(resolveModelSettings(none, {}, { force: true })?.model).toBe('deepseek-v4-pro:cloud');
  });

  it('reads the API key from the variable the policy names, never from the policy', async () => {
    const policy = await judgePolicy(tempBaseDir(), { model: 'm', apiKeyEnv: 'MY_KEY' });
    expect(resolveModelSettings(policy, { MY_KEY: 'secret' })).toMatchObject({ apiKeyEnv: 'MY_KEY', hasApiKey: true });
    expect(JSON.stringify(resolveModelSettings(policy, { MY_KEY: 'secret' }))).not.toContain('secret');
  });
});

describe('model settings: an OpenAI-compatible API', () => {
  const openai = {
    baseUrl: 'http://127.0.0.1:8080/v1',
    model: 'policy-model',
    apiKeyEnv: 'OPENAI_API_KEY',
    responseFormat: 'json_schema' as const,
    maxRetries: 2,
  };

  it('turns on with spec.judge.openai: its base URL, model, format and key variable', async () => {
    const policy = await judgePolicy(tempBaseDir(), { openai });
    expect(resolveModelSettings(policy, { OPENAI_API_KEY: 'k' })).toMatchObject({
      model: 'policy-model',
      apiKeyEnv: 'OPENAI_API_KEY',
      hasApiKey: true,
      openai: { baseUrl: 'http://127.0.0.1:8080/v1', responseFormat: 'json_schema', maxRetries: 2 },
    });
  });

  it('AGENT_JUDGE_OPENAI_* override the policy, and win over a local GGUF', async () => {
    const policy = await judgePolicy(tempBaseDir(), {
      local: { gguf: 'm.gguf', maxAnswerTokens: 64, contextSize: 1024 },
    });
    const env = {
      AGENT_JUDGE_OPENAI_BASE_URL: 'https://api.deepseek.example/v1',
      AGENT_JUDGE_OPENAI_MODEL: 'deepseek-chat',
      AGENT_JUDGE_OPENAI_FORMAT: 'json_object',
    };
    const s = resolveModelSettings(policy, env);
    expect(s).toMatchObject({ model: 'deepseek-chat', openai: { responseFormat: 'json_object' } });
    expect(s?.local).toBeUndefined();
    expect(createJudgeDepsFromEnv(policy, env).model).toMatchObject({ model: 'deepseek-chat', schemaInPrompt: true });
  });

  it('--host asks for Ollama even when the policy names an API; AGENT_JUDGE_MODEL=off turns it off', async () => {
    const policy = await judgePolicy(tempBaseDir(), { openai });
    expect(resolveModelSettings(policy, {}, { host: 'http://gpu:11434' })?.openai).toBeUndefined();
    expect(resolveModelSettings(policy, { AGENT_JUDGE_MODEL: 'off' })).toBeNull();
  });

  it('refuses what it cannot use, naming the setting', async () => {
    const both = await judgePolicy(tempBaseDir(), {
      openai,
      local: { gguf: 'm.gguf', maxAnswerTokens: 64, contextSize: 1024 },
    });
    expect(() => resolveModelSettings(both, {})).toThrow(/spec\.judge: set one of local .* and openai .*, not both/);
    const none = await judgePolicy(tempBaseDir());
    expect(() => resolveModelSettings(none, { AGENT_JUDGE_OPENAI_BASE_URL: 'http://h:1/v1' })).toThrow(
      /needs a model: set AGENT_JUDGE_OPENAI_MODEL or spec\.judge\.openai\.model/,
    );
    expect(() =>
      resolveModelSettings(none, {
        AGENT_JUDGE_OPENAI_BASE_URL: 'http://h:1/v1',
        AGENT_JUDGE_OPENAI_MODEL: 'm',
        AGENT_JUDGE_OPENAI_FORMAT: 'yaml',
      }),
    ).toThrow(/response format "yaml": expected json_schema or json_object/);
  });

  it('the policy schema checks the section and the stated rules, naming the field', () => {
    const ok = JudgeSettingsSchema.parse({
      openai: { baseUrl: 'https://api.openai.com/v1', model: 'gpt-4.1-mini' },
      statedRules: [{ name: 'car-needs-license', actionTypes: ['web_navigation'], text: 'No car without a licence.' }],
    });
    expect(ok.openai).toMatchObject({ apiKeyEnv: 'OPENAI_API_KEY', responseFormat: 'json_schema', maxRetries: 2 });
    const bad = JudgeSettingsSchema.safeParse({
      openai: { baseUrl: 'ftp://x', model: 'm', responseFormat: 'xml' },
      statedRules: [{ name: 'Bad Name', text: '' }],
    });
    expect(bad.success).toBe(false);
    const paths = bad.error!.issues.map((i) => i.path.join('.'));
    expect(paths).toEqual(
      expect.arrayContaining(['openai.baseUrl', 'openai.responseFormat', 'statedRules.0.name', 'statedRules.0.text']),
    );
  });
});
