/**
 * The judge on a real model: the Gemma 3 270M GGUF through the local backend (node-llama-cpp in
 * the judge process) and through the Ollama API path (the real `ollama` client against a loopback
 * Ollama-compatible shim over the same model). Per judgement: latency, parse rate, tokens in/out.
 * `BENCH_ONLY=judge-model npm run bench`; BENCH_JUDGE_MODEL_CASES picks how many corpus cases.
 */
import { closeSync, openSync } from 'node:fs';
import type { CompliancePolicy } from '../src/contracts/policy';
import type { Verdict } from '../src/contracts/verdict';
import { judgeProposal, type JudgeDeps } from '../src/judge';
import { tierFor } from '../src/policy/classify';
import { createLocalModel, openLocalLlm } from '../src/judge/local';
import { createOllamaModel } from '../src/judge/model';
import { judgePolicy, loadCorpus, tempBaseDir } from '../test/helpers/judge-fixtures';
import { startOllamaShim } from '../test/helpers/ollama-shim';
import { REAL_MODEL_PATH, REAL_MODEL_THREADS } from '../test/helpers/real-model';
import { percentile, type Row } from './lib';

interface Sample {
  ms: number;
  parsed: boolean;
  tokensIn: number | null;
  tokensOut: number | null;
}

async function judgeAll(policy: CompliancePolicy, deps: JudgeDeps, n: number): Promise<Sample[]> {
  const cases = loadCorpus().filter((c) => c.proposal.cited_evidence.length > 0);
  const samples: Sample[] = [];
  for (const c of cases) {
    if (samples.length >= n) break;
    const started = performance.now();
    const v: Verdict = await judgeProposal(
      { proposal: c.proposal, tier: tierFor(policy, c.proposal.action_type), round: 0, policy },
      deps,
    );
    // Only judgements that reached the model count (the rules decide the rest without it).
    if (!v.judge) continue;
    const ms = performance.now() - started;
    console.error(
      `  ${deps.model?.model} ${c.proposal.proposal_id}: ${Math.round(ms)} ms, ` +
        `${v.judge.error ? `not parsed (${v.judge.error.slice(0, 80)})` : 'parsed'}, ` +
        `tokens ${v.judge.prompt_tokens}/${v.judge.completion_tokens}`,
    );
    samples.push({
      ms,
      parsed: v.judge.error === undefined,
      tokensIn: v.judge.prompt_tokens,
      tokensOut: v.judge.completion_tokens,
    });
  }
  return samples;
}

function rows(name: string, samples: Sample[]): Row[] {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  const med = (xs: Array<number | null>) => {
    const v = xs.filter((x): x is number => x !== null).sort((a, b) => a - b);
    return v.length ? percentile(v, 50) : Number.NaN;
  };
  const parsed = samples.filter((s) => s.parsed).length;
  return [
    {
      name: `${name}: one judgement`,
      n: samples.length,
      p50: percentile(sorted, 50),
      p95: percentile(sorted, 95),
      note:
        `parse rate ${parsed}/${samples.length}; tokens in p50 ${med(samples.map((s) => s.tokensIn))}, ` +
        `out p50 ${med(samples.map((s) => s.tokensOut))}`,
    },
  ];
}

/** Both backends on the same cases; the model is loaded once and shared. */
export async function benchJudgeModel(): Promise<Row[]> {
  closeSync(openSync(REAL_MODEL_PATH, 'r')); // a clear error when the model is missing
  const n = Number(process.env.BENCH_JUDGE_MODEL_CASES ?? 12);
  const baseDir = tempBaseDir();
  const policy = await judgePolicy(baseDir, { timeoutMs: 120_000 });
  const llm = openLocalLlm({ gguf: REAL_MODEL_PATH, threads: REAL_MODEL_THREADS });
  const loadStarted = performance.now();
  await llm.load();
  const loadMs = performance.now() - loadStarted;
  const out: Row[] = [{ name: 'local model load (270M Q4_K_M)', n: 1, p50: loadMs }];
  out.push(...rows('local backend', await judgeAll(policy, { baseDir, model: createLocalModel(llm) }, n)));
  const shim = await startOllamaShim(llm);
  try {
    const model = createOllamaModel({ model: shim.model, host: shim.host });
    out.push(...rows('Ollama API path (shim)', await judgeAll(policy, { baseDir, model }, n)));
  } finally {
    await shim.close();
    await llm.dispose();
  }
  return out;
}
