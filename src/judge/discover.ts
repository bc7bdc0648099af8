/**
 * Which model judges, found at worker start: the configured one (a local GGUF, an OpenAI-compatible API, an Ollama
 * model), or an Ollama server that answers at `OLLAMA_HOST` (default local) with the policy's model. The answer is
 * also what `dev` and `worker` print, so nobody has to guess whether a model reviews full-judge proposals.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ollama } from 'ollama';
import type { CompliancePolicy } from '../contracts/policy';
import { createJudgeDepsFromEnv, resolveModelSettings, type JudgeDeps, type JudgeDepsOverrides } from './index';
import { DEFAULT_JUDGE_MODEL } from './model';
import { probeOpenAIModel } from './openai';
import { defaultLocalThreads } from './local';

export type ProbeResult = { found: true } | { found: false; why: string };

/** Ollama lists `name` as `name:latest` when it was pulled without a tag. */
const sameModel = (listed: string, wanted: string) =>
  listed === wanted || listed === `${wanted}:latest` || `${listed}:latest` === wanted;

/** Asks an Ollama server (bounded by `timeoutMs`) whether it has `model`. Never throws. */
export async function probeOllamaModel(
  host: string | undefined,
  model: string,
  options: { timeoutMs?: number; fetch?: typeof fetch; apiKey?: string } = {},
): Promise<ProbeResult> {
  const timeoutMs = options.timeoutMs ?? 1500;
  const signal = AbortSignal.timeout(timeoutMs);
  const baseFetch = options.fetch ?? fetch;
  const client = new Ollama({
    host: host ?? '',
    fetch: (input, init) => baseFetch(input, { ...init, signal }),
    ...(options.apiKey ? { headers: { Authorization: `Bearer ${options.apiKey}` } } : {}),
  });
  try {
    const list = await client.list();
    if (list.models.some((m) => sameModel(m.name, model) || sameModel(m.model, model))) return { found: true };
    const names = list.models.map((m) => m.name).slice(0, 5);
    return {
      found: false,
      why: `the Ollama server has no ${model} (it has ${names.length > 0 ? names.join(', ') : 'no models'})`,
    };
  } catch (err) {
    if (signal.aborted) return { found: false, why: `no Ollama server answered within ${timeoutMs} ms` };
    const e = err as { message?: string; cause?: { code?: string } };
    return { found: false, why: `no Ollama server answers (${e.cause?.code ?? e.message ?? String(err)})` };
  }
}

export interface ResolvedJudge {
  deps: Omit<JudgeDeps, 'baseDir'> & { baseDir?: string };
  /** One line for people: which model judges, or why none does and what happens then. */
  description: string;
}

/**
 * The judge's deps for a worker: the configured model, else the policy's model if an Ollama server
 * at `OLLAMA_HOST` (default local) has it, else none (the policy's `withoutModel` applies, and the
 * reason travels into every such verdict). `AGENT_JUDGE_MODEL=off` skips the probe.
 */
export async function resolveJudge(
  policy: CompliancePolicy,
  env: NodeJS.ProcessEnv,
  options: JudgeDepsOverrides & { probeTimeoutMs?: number } = {},
): Promise<ResolvedJudge> {
  const s = policy.spec.judge;
  const timeoutMs = s?.timeoutMs ?? 20_000;
  const mode = s?.withoutModel ?? 'escalate';
  const withoutModel = {
    escalate: 'a person decides every rules-clean full-judge-review proposal',
    clarify: 'rules-clean full-judge-review proposals go back to the agent to clarify',
    approve: 'the rules alone approve full-judge-review proposals (no model reviews their content)',
  }[mode];
  const { probeTimeoutMs, ...overrides } = options;
  const settings = resolveModelSettings(policy, env, overrides);
  if (settings?.openai) {
    const deps = createJudgeDepsFromEnv(policy, env, overrides);
    const { baseUrl, responseFormat } = settings.openai;
    const how = responseFormat === 'json_schema' ? 'strict json_schema' : 'json_object, schema in the prompt';
    const key = settings.hasApiKey ? `key from ${settings.apiKeyEnv}` : `no key (${settings.apiKeyEnv} is unset)`;
    const probe = await probeOpenAIModel(baseUrl, settings.model, {
      timeoutMs: probeTimeoutMs,
      fetch: overrides.fetch,
      apiKey: env[settings.apiKeyEnv] || undefined,
    });
    const what =
      `model ${settings.model} at ${baseUrl} ` + `(OpenAI-compatible API, ${how}, ${key}, timeout ${timeoutMs} ms)`;
    return {
      deps,
      description: probe.found
        ? `rules + ${what}`
        : `rules + ${what}, but it is not confirmed now: ${probe.why}; ` +
          `if it cannot be reached, spec.judge.withoutModel: ${mode}: ${withoutModel}`,
    };
  }
  if (settings?.local) {
    const deps = createJudgeDepsFromEnv(policy, env, overrides);
    const threads = settings.local.threads ?? defaultLocalThreads();
    const path = resolve(overrides.baseDir ?? process.cwd(), settings.local.gguf);
    if (!existsSync(path)) {
      return {
        deps,
        description:
          `local model ${settings.local.gguf} is configured, but there is no such file (${path}); ` +
          `spec.judge.withoutModel: ${mode}: ${withoutModel}`,
      };
    }
    return {
      deps,
      description:
        `rules + local model ${settings.local.gguf} (node-llama-cpp, ${threads} thread${threads === 1 ? '' : 's'}, ` +
        `at most ${settings.local.maxAnswerTokens} answer tokens, timeout ${timeoutMs} ms); ` +
        `if it cannot load, spec.judge.withoutModel: ${mode}: ${withoutModel}`,
    };
  }
  if (settings) {
    const deps = createJudgeDepsFromEnv(policy, env, overrides);
    const where = settings.host ?? 'the Ollama default host';
    const probe = await probeOllamaModel(settings.host, settings.model, {
      timeoutMs: probeTimeoutMs,
      fetch: overrides.fetch,
      apiKey: env[settings.apiKeyEnv] || undefined,
    });
    return {
      deps,
      description: probe.found
        ? `rules + model ${settings.model} at ${where} (timeout ${timeoutMs} ms)`
        : `rules + model ${settings.model} at ${where}, but it is not there now: ${probe.why}; ` +
          `until it is, spec.judge.withoutModel: ${mode}: ${withoutModel}`,
    };
  }

  const off = /^(?:off|none|false|0|no)$/i.test(env.AGENT_JUDGE_MODEL?.trim() ?? '');
  const model = s?.model ?? DEFAULT_JUDGE_MODEL;
  const host = s?.host ?? (env.OLLAMA_HOST?.trim() || undefined);
  const probe: ProbeResult = off
    ? { found: false, why: 'AGENT_JUDGE_MODEL=off' }
    : await probeOllamaModel(host, model, {
        timeoutMs: probeTimeoutMs,
        fetch: overrides.fetch,
        apiKey: env[s?.apiKeyEnv ?? 'OLLAMA_API_KEY'] || undefined,
      });
  if (probe.found) {
    const deps = createJudgeDepsFromEnv(policy, env, { ...overrides, model, ...(host ? { host } : {}) });
    return {
      deps,
      description: `rules + model ${model} found at ${host ?? 'the Ollama default host'} (timeout ${timeoutMs} ms)`,
    };
  }
  const why = off
    ? 'the model is turned off (AGENT_JUDGE_MODEL=off)'
    : `no model is configured, and ${model} was not found at ${host ?? 'the Ollama default host'}: ${probe.why}`;
  const deps = {
    ...createJudgeDepsFromEnv(policy, { ...env, AGENT_JUDGE_MODEL: 'off' }, overrides),
    noModelReason: why,
  };
  return {
    deps,
    description:
      `no model: ${why}. spec.judge.withoutModel: ${mode}: ${withoutModel} ` + '(see docs/judge.md to add a model)',
  };
}
