/**
 * The OpenAI-compatible judge end to end against a real server: llama.cpp's own OpenAI API from the `xllamacpp`
 * wheel (PyPI), started here on a free loopback port with one thread over the Gemma 3 270M GGUF, driven by the
 * official `openai` client. A 270M model is plumbing, not a judge: these tests check that the strict schema and
 * JSON mode reach the server and hold its answer, that answers parse into verdicts with the audit fields filled
 * from `usage`, and that the user's task travels and is accounted for; never accuracy.
 *
 * The wheel and the model come from the test setup (scripts/test-tools.mjs): when either is missing these tests fail
 * saying why, in CI and on a laptop alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompliancePolicy } from '../../src/contracts/policy';
import type { Proposal } from '../../src/contracts/proposal';
import type { Verdict } from '../../src/contracts/verdict';
import { judgeProposal } from '../../src/judge';
import { MODEL_ANSWER_STRICT_JSON_SCHEMA } from '../../src/judge/answer';
import { createOpenAIModel } from '../../src/judge/openai';
import { judgePolicy, loadCorpus, tempBaseDir } from '../helpers/judge-fixtures';
import { startLlamaServer, type LlamaServer } from '../helpers/openai-server';
import { toolPath } from '../helpers/tools';

/** A rules-clean corpus case with evidence: it reaches the model. */
const modelCase = (): Proposal =>
  loadCorpus().find(
    (c) => c.expected === 'APPROVE' && c.tags.includes('canned') && c.proposal.action_type === 'forgejo_pr_create',
  )!.proposal;

function expectAudit(v: Verdict, model: string): void {
  expect(v.decided_by).toBe('judge');
  expect(v.judge?.model).toBe(model);
  expect(v.judge?.prompt_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
  expect(v.judge?.latency_ms).toBeGreaterThan(0);
  expect(v.judge?.prompt_tokens).toBeGreaterThan(0);
  expect(v.judge?.completion_tokens).toBeGreaterThan(0);
  expect(v.judge?.raw_answer?.length).toBeGreaterThan(0);
}

describe('the judge through llama.cpp’s OpenAI API (real server, official client)', () => {
  let server: LlamaServer;
  let policy: CompliancePolicy;
  const baseDir = tempBaseDir();
  beforeAll(async () => {
    server = await startLlamaServer({ gguf: toolPath('realModel'), threads: 1, dir: toolPath('xllamacpp') });
    policy = await judgePolicy(baseDir, { timeoutMs: 600_000 });
  }, 300_000);
  afterAll(async () => {
    await server?.stop();
  });

  const judge = (proposal: Proposal, responseFormat: 'json_schema' | 'json_object') =>
    judgeProposal(
      { proposal, tier: 'full-judge-review', round: 0, policy },
      {
        baseDir,
        model: createOpenAIModel({
          baseUrl: server.baseUrl,
          model: server.model,
          responseFormat,
          maxAnswerTokens: 384,
          maxRetries: 0,
        }),
      },
    );

  it('json_schema (strict): the server holds the answer to the strict schema, it parses, usage audited', async () => {
    const v = await judge(modelCase(), 'json_schema');
    expect(v.judge?.error, server.log().slice(-1500)).toBeUndefined();
    expectAudit(v, server.model);
    // Strict mode makes every key required: the raw answer has all of them, so the schema reached llama.cpp.
    const raw = JSON.parse(v.judge!.raw_answer!) as Record<string, unknown>;
    const strictKeys = Object.keys(MODEL_ANSWER_STRICT_JSON_SCHEMA.properties as object);
    expect(Object.keys(raw).sort()).toEqual(strictKeys.sort());
  }, 600_000);

  it('json_object: JSON mode holds the answer to a JSON object; the schema travels in the prompt', async () => {
    const v = await judge(modelCase(), 'json_object');
    expect(v.decided_by).toBe('judge');
    expect(v.judge?.prompt_tokens).toBeGreaterThan(0);
    // The 270M model may or may not follow the schema it reads; JSON mode guarantees an object either way.
    const raw = v.judge?.raw_answer ?? '';
    expect(typeof JSON.parse(raw), raw).toBe('object');
    if (v.judge?.error) expect(v).toMatchObject({ confidence: 0, rule: 'judge.failure' });
  }, 600_000);

  it("the user's task: the audit names it by hash, and no approval stands without serves_task", async () => {
    const proposal = { ...modelCase(), proposal_id: 'real-task', user_task: 'Add schema validation (issue #42).' };
    const v = await judge(proposal, 'json_schema');
    expect(v.judge?.error, server.log().slice(-1500)).toBeUndefined();
    expectAudit(v, server.model);
    expect(v.judge?.user_task_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(['serves_task', 'other_goal', 'unclear']).toContain(v.judge?.task_alignment);
    if (v.judge?.task_alignment !== 'serves_task') expect(v.verdict).not.toBe('APPROVE');
  }, 600_000);
});
