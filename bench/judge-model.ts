/**
 * The judge on a real model: the Gemma 3 270M GGUF through every backend, interleaved case by case so the machine's
 * load falls on all of them alike:
 * - the local backend (node-llama-cpp in the judge process) with 1 and with 2 threads (the thread-count default);
 * - the Ollama API path: the real `ollama` client against the test helpers' Ollama-compatible shim over its own
 *   copy of the local model (1 thread);
 * - the OpenAI-compatible path: the official `openai` client against llama.cpp's own server (xllamacpp from PyPI,
 *   1 thread), strict `json_schema`.
 * Per judgement: latency, parse rate, tokens in/out. `BENCH_ONLY=judge-model npm run bench`;
 * BENCH_JUDGE_MODEL_CASES picks how many corpus cases (default 10).
 */
import { closeSync, openSync } from 'node:fs';
import type { Verdict } from '../src/contracts/verdict';
import { judgeProposal, type JudgeDeps } from '../src/judge';
import { tierFor } from '../src/policy/classify';
import { createLocalModel, openLocalLlm, type LocalLlm } from '../src/judge/local';
import { createOllamaModel } from '../src/judge/model';
import { createOpenAIModel } from '../src/judge/openai';
import { judgePolicy, loadCorpus, tempBaseDir } from '../test/helpers/judge-fixtures';
import { startOllamaShim } from '../test/helpers/ollama-shim';
import { startLlamaServer, xllamacppPresent } from '../test/helpers/openai-server';
import { REAL_MODEL_PATH } from '../test/helpers/real-model';
import { percentile, type Row } from './lib';

interface Sample {
  ms: number;
  parsed: boolean;
  tokensIn: number | null;
  tokensOut: number | null;
}

function rows(name: string, samples: Sample[], baselineP50?: number): Row {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  const med = (xs: Array<number | null>) => {
    const v = xs.filter((x): x is number => x !== null).sort((a, b) => a - b);
    return v.length ? percentile(v, 50) : Number.NaN;
  };
  const parsed = samples.filter((s) => s.parsed).length;
  const p50 = percentile(sorted, 50);
  return {
    name,
    n: samples.length,
    p50,
    p95: percentile(sorted, 95),
    note:
      `parse rate ${parsed}/${samples.length}; tokens in p50 ${med(samples.map((s) => s.tokensIn))}, ` +
      `out p50 ${med(samples.map((s) => s.tokensOut))}` +
      (baselineP50 ? `; p50 ${(p50 / baselineP50).toFixed(2)}x local 1 thread` : ''),
  };
}

/** Every backend on the same cases, one case at a time through all of them in turn. */
export async function benchJudgeModel(): Promise<Row[]> {
  closeSync(openSync(REAL_MODEL_PATH, 'r')); // a clear error when the model is missing
  const n = Number(process.env.BENCH_JUDGE_MODEL_CASES ?? 10);
  const baseDir = tempBaseDir();
  const policy = await judgePolicy(baseDir, { timeoutMs: 300_000 });
  const out: Row[] = [];
  const llms: LocalLlm[] = [];
  const loaded = async (threads: number) => {
    const llm = openLocalLlm({ gguf: REAL_MODEL_PATH, threads });
    const started = performance.now();
    await llm.load();
    out.push({
      name: `local model load (270M Q4_K_M, ${threads} thread${threads > 1 ? 's' : ''})`,
      n: 1,
      p50: performance.now() - started,
    });
    llms.push(llm);
    return llm;
  };
  const one = await loaded(1);
  const two = await loaded(2);
  // The shim gets a model of its own: sharing one would let it reuse the local backend's cache of the same prompt.
  const shim = await startOllamaShim(await loaded(1));
  const serverStarted = performance.now();
  const server = xllamacppPresent() ? await startLlamaServer({ gguf: REAL_MODEL_PATH, threads: 1 }) : null;
  if (server)
    out.push({ name: 'llama.cpp server start + model load (1 thread)', n: 1, p50: performance.now() - serverStarted });
  const backends: Array<[string, JudgeDeps['model']]> = [
    ['local backend, 1 thread', createLocalModel(one)],
    ['local backend, 2 threads', createLocalModel(two)],
    [
      'Ollama API path (shim over its own local model, 1 thread)',
      createOllamaModel({ model: shim.model, host: shim.host }),
    ],
    ...(server
      ? ([
          [
            'OpenAI-compatible (llama.cpp server, 1 thread, strict json_schema)',
            createOpenAIModel({ baseUrl: server.baseUrl, model: server.model, maxAnswerTokens: 384, maxRetries: 0 }),
          ],
        ] as Array<[string, JudgeDeps['model']]>)
      : []),
  ];
  const samples = new Map<string, Sample[]>(backends.map(([name]) => [name, []]));
  try {
    let judged = 0;
    for (const c of loadCorpus().filter((x) => x.proposal.cited_evidence.length > 0)) {
      if (judged >= n) break;
      const input = { proposal: c.proposal, tier: tierFor(policy, c.proposal.action_type), round: 0, policy };
      let reached = false;
      for (const [name, model] of backends) {
        const started = performance.now();
        const v: Verdict = await judgeProposal(input, { baseDir, model });
        // Only judgements that reached the model count (the rules decide the rest without it).
        if (!v.judge) break;
        reached = true;
        const ms = performance.now() - started;
        console.error(
          `  ${name} ${c.proposal.proposal_id}: ${Math.round(ms)} ms, ` +
            `${v.judge.error ? `not parsed (${v.judge.error.slice(0, 80)})` : 'parsed'}, ` +
            `tokens ${v.judge.prompt_tokens}/${v.judge.completion_tokens}`,
        );
        samples.get(name)!.push({
          ms,
          parsed: v.judge.error === undefined,
          tokensIn: v.judge.prompt_tokens,
          tokensOut: v.judge.completion_tokens,
        });
      }
      if (reached) judged += 1;
    }
  } finally {
    await server?.stop();
    await shim.close();
    for (const llm of llms) await llm.dispose();
  }
  const baseline = samples
    .get('local backend, 1 thread')!
    .map((s) => s.ms)
    .sort((a, b) => a - b);
  const base50 = baseline.length ? percentile(baseline, 50) : undefined;
  for (const [name] of backends)
    out.push(
      rows(`${name}: one judgement`, samples.get(name)!, name.startsWith('local backend, 1') ? undefined : base50),
    );
  return out;
}
