import type { CompliancePolicy } from '../contracts/policy';
import type { Proposal } from '../contracts/proposal';
import { VerdictSchema, type Tier, type Verdict } from '../contracts/verdict';
import { PolicyError } from '../contracts/errors';
import { combineVerdict, rulesVerdict, withoutModelVerdict } from './combine';
import { describeChecks, verifyEvidence, type EvidenceReport } from './evidence';
import { askModel, createOllamaModel, DEFAULT_JUDGE_MODEL, type ModelClient } from './model';
import { createLocalModel, openLocalLlm } from './local';
import { createOpenAIModel } from './openai';
import { OpenAIResponseFormatSchema, type OpenAIResponseFormat } from '../contracts/judge-settings';
import { lightweightCheck } from '../policy/patterns';
import { buildPrompt, findInjectionMarkers } from './prompt';
import { hardRules } from '../guards/rules';

export type { ModelClient } from './model';
export { judgeActivityTimeoutMs } from '../contracts/judge-settings';

/** What the judge activity receives: the proposal as it stands, and the policy snapshot in force. */
export interface JudgeInput {
  proposal: Proposal;
  tier: Tier;
  /** 0 for the first judgement, then one more per clarification. */
  round: number;
  policy: CompliancePolicy;
}

/** What the judge process holds: a model client and read-only lookups, never executor credentials. */
export interface JudgeDeps {
  /** Directory relative paths resolve against. */
  baseDir: string;
  now?: () => Date;
  /**
   * The model behind the rules. Without one, rules-clean proposals get what the policy's
   * `spec.judge.withoutModel` says (default: a person decides), never a silent approval.
   */
  model?: ModelClient;
  /** Why there is no model (shown in the verdict and the dispute); default "no model is configured". */
  noModelReason?: string;
  /** Budget for one model conversation; default `policy.spec.judge.timeoutMs` (20 s). */
  modelTimeoutMs?: number;
  /** fetch for Forgejo evidence lookups (tests point it anywhere; default global fetch). */
  fetch?: typeof fetch;
  /** Where the Forgejo token variable named by the policy is read (no token without it). */
  env?: NodeJS.ProcessEnv;
  /**
   * What checking the cited evidence found, when the caller already knows (a replay reuses the recorded checks);
   * undefined asks {@link verifyEvidence}.
   */
  evidence?: (proposal: Proposal) => EvidenceReport | undefined;
}

/**
 * The full judge for full-judge-review proposals, in deny-wins order:
 * 1. hard rules and deny patterns: a REJECT is final, the model is not asked;
 * 2. no cited evidence: CLARIFY, returned as is;
 * 3. evidence verification: evidence for another repository is a REJECT, evidence that fails
 *    (missing, closed, host not allowed) a CLARIFY;
 * 4. the model, whose answer can only tighten the rules' approval ({@link combineVerdict}); with no
 *    model, or one that is not there, the policy's `spec.judge.withoutModel` ({@link withoutModelVerdict}).
 * Model problems never throw: they come back as confidence 0 with `judge.error` set.
 */
export async function judgeProposal(input: JudgeInput, deps: JudgeDeps): Promise<Verdict> {
  const { proposal, tier, policy } = input;
  const decidedAt = () => (deps.now?.() ?? new Date()).toISOString();

  const hard = hardRules(proposal, { policy, baseDir: deps.baseDir });
  if (hard) return rulesVerdict(proposal, tier, hard, decidedAt());
  const patterns = lightweightCheck(proposal, policy);
  if (patterns.verdict === 'REJECT') return rulesVerdict(proposal, tier, patterns, decidedAt());
  if (proposal.cited_evidence.length === 0) {
    return rulesVerdict(
      proposal,
      tier,
      {
        verdict: 'CLARIFY',
        rule: 'evidence.missing',
        reason:
          'cited_evidence is empty: cite the issue, task assignment or request this action serves ' +
          '(for example {"type":"issue","url":"..."})',
      },
      decidedAt(),
    );
  }

  const settings = policy.spec.judge;
  const tokenEnv = settings?.forgejo?.tokenEnv;
  const evidence =
    deps.evidence?.(proposal) ??
    (await verifyEvidence(proposal, settings, {
      fetch: deps.fetch,
      forgejoToken: tokenEnv ? deps.env?.[tokenEnv] || undefined : undefined,
    }));
  // From here on every verdict carries what the evidence check found, for the people who may decide.
  const withChecks = (v: Verdict): Verdict => ({ ...v, evidence_checks: evidence.checks });
  if (evidence.otherRepo > 0) {
    const bad = evidence.checks.filter((c) => c.status === 'other-repo');
    return withChecks(
      rulesVerdict(
        proposal,
        tier,
        {
          verdict: 'REJECT',
          rule: 'evidence.other-repo',
          reason: `evidence for another repository: ${describeChecks(bad)}`,
        },
        decidedAt(),
      ),
    );
  }
  if (evidence.failed > 0) {
    const bad = evidence.checks.filter((c) => c.status === 'failed');
    return withChecks(
      rulesVerdict(
        proposal,
        tier,
        {
          verdict: 'CLARIFY',
          rule: 'evidence.failed',
          reason:
            `cited evidence failed verification: ${describeChecks(bad)}; ` +
            'cite open issues or PRs of the target on an allowed host',
        },
        decidedAt(),
      ),
    );
  }

  const mode = settings?.withoutModel ?? 'escalate';
  const markers = findInjectionMarkers(proposal);
  if (!deps.model) {
    const why = deps.noModelReason ?? 'no model is configured';
    return withChecks(withoutModelVerdict({ proposal, tier, mode, why, markers, decidedAt: decidedAt() }));
  }

  const prompt = buildPrompt({
    proposal,
    tier,
    policy,
    evidence: evidence.checks,
    markers,
    round: input.round,
    schemaInPrompt: deps.model.schemaInPrompt === true,
  });
  const outcome = await askModel(deps.model, prompt, {
    timeoutMs: deps.modelTimeoutMs ?? settings?.timeoutMs ?? 20_000,
  });
  if (!outcome.ok && outcome.unavailable) {
    const why = `the configured model ${deps.model.model} is not there: ${outcome.audit.error ?? 'unknown error'}`;
    return VerdictSchema.parse(
      withChecks(
        withoutModelVerdict({ proposal, tier, mode, why, markers, decidedAt: decidedAt(), audit: outcome.audit }),
      ),
    );
  }
  // A schema violation here is a bug in this module, not a model problem: let it fail loudly.
  return VerdictSchema.parse(
    withChecks(combineVerdict({ proposal, tier, evidence, markers, model: outcome, decidedAt: decidedAt() })),
  );
}

/** The judge model the policy and environment ask for, or null when the judge runs on rules alone. */
export interface ModelSettings {
  model: string;
  host?: string;
  /** Name of the variable the API key came from (the key itself is not kept here). */
  apiKeyEnv: string;
  hasApiKey: boolean;
  timeoutMs: number;
  /** Set when the policy names a local GGUF model (`spec.judge.local`): it judges instead of Ollama. */
  local?: { gguf: string; threads?: number; maxAnswerTokens: number; contextSize: number };
  /** Set when an OpenAI-compatible API judges (`spec.judge.openai`, `AGENT_JUDGE_OPENAI_BASE_URL`, `--base-url`). */
  openai?: {
    baseUrl: string;
    responseFormat: OpenAIResponseFormat;
    maxAnswerTokens?: number;
    maxRetries: number;
  };
}

const OFF = /^(?:off|none|false|0|no)$/i;
const ON = /^(?:on|true|1|yes|default)$/i;

/**
 * Works out whether and which model judges. The model is opt-in: on when the policy's
 * `spec.judge.model` is set (or `spec.judge.enabled: true`), or when `AGENT_JUDGE_MODEL` is set.
 * `AGENT_JUDGE_MODEL` names the model (`on` keeps the policy's or the default), `off` turns it off.
 * `spec.judge.local` (a GGUF file) puts a local model in Ollama's place.
 * Host: `spec.judge.host`, else `OLLAMA_HOST`, else ollama-js's default (127.0.0.1:11434).
 */
export function resolveModelSettings(
  policy: CompliancePolicy,
  env: NodeJS.ProcessEnv,
  overrides: { model?: string; host?: string; baseUrl?: string; format?: string; force?: boolean } = {},
): ModelSettings | null {
  const s = policy.spec.judge;
  if (s?.local && s?.openai) {
    throw new PolicyError('spec.judge: set one of local (a GGUF file) and openai (an API), not both');
  }
  const fromEnv = env.AGENT_JUDGE_MODEL?.trim() || undefined;
  if (fromEnv && OFF.test(fromEnv) && !overrides.model && !overrides.force) return null;
  const envModel = fromEnv && !ON.test(fromEnv) && !OFF.test(fromEnv) ? fromEnv : undefined;
  const envBaseUrl = env.AGENT_JUDGE_OPENAI_BASE_URL?.trim() || undefined;
  const enabled =
    overrides.force === true ||
    overrides.model !== undefined ||
    overrides.baseUrl !== undefined ||
    envBaseUrl !== undefined ||
    (fromEnv !== undefined && !OFF.test(fromEnv)) ||
    (s?.enabled ?? (s?.model !== undefined || s?.local !== undefined || s?.openai !== undefined));
  if (!enabled) return null;
  // An OpenAI-compatible API: asked for by --base-url or AGENT_JUDGE_OPENAI_BASE_URL, or configured in the policy
  // (unless --host asks for Ollama). Its model: --model, AGENT_JUDGE_OPENAI_MODEL, AGENT_JUDGE_MODEL, the policy's.
  const baseUrl = overrides.baseUrl ?? envBaseUrl ?? (overrides.host ? undefined : s?.openai?.baseUrl);
  if (baseUrl !== undefined) {
    const model =
      overrides.model ?? (env.AGENT_JUDGE_OPENAI_MODEL?.trim() || undefined) ?? envModel ?? s?.openai?.model;
    if (!model) {
      throw new PolicyError(
        `an OpenAI-compatible judge at ${baseUrl} needs a model: ` +
          'set AGENT_JUDGE_OPENAI_MODEL or spec.judge.openai.model',
      );
    }
    try {
      const u = new URL(baseUrl);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
    } catch {
      throw new PolicyError(`judge base URL ${JSON.stringify(baseUrl)} is not an http(s) URL`);
    }
    const formatText = overrides.format ?? (env.AGENT_JUDGE_OPENAI_FORMAT?.trim() || undefined);
    const format = OpenAIResponseFormatSchema.safeParse(formatText ?? s?.openai?.responseFormat ?? 'json_schema');
    if (!format.success) {
      throw new PolicyError(`judge response format ${JSON.stringify(formatText)}: expected json_schema or json_object`);
    }
    const apiKeyEnv = s?.openai?.apiKeyEnv ?? 'OPENAI_API_KEY';
    return {
      model,
      apiKeyEnv,
      hasApiKey: Boolean(env[apiKeyEnv]),
      timeoutMs: s?.timeoutMs ?? 20_000,
      openai: {
        baseUrl,
        responseFormat: format.data,
        ...(s?.openai?.maxAnswerTokens ? { maxAnswerTokens: s.openai.maxAnswerTokens } : {}),
        maxRetries: s?.openai?.maxRetries ?? 2,
      },
    };
  }
  const apiKeyEnv = s?.apiKeyEnv ?? 'OLLAMA_API_KEY';
  // The local model is the policy's choice unless a model name (env, --model) asks for Ollama.
  const local = s?.local && !envModel && !overrides.model && !overrides.host ? s.local : undefined;
  return {
    ...(local ? { local } : {}),
    model: overrides.model ?? envModel ?? s?.model ?? DEFAULT_JUDGE_MODEL,
    host: overrides.host ?? s?.host ?? (env.OLLAMA_HOST?.trim() || undefined),
    apiKeyEnv,
    hasApiKey: Boolean(env[apiKeyEnv]),
    timeoutMs: s?.timeoutMs ?? 20_000,
  };
}

export interface JudgeDepsOverrides {
  baseDir?: string;
  /** Model name (the eval's `--model`); turns the model on. */
  model?: string;
  /** Ollama host (the eval's `--host`). */
  host?: string;
  /** An OpenAI-compatible API base (the eval's `--base-url`): it judges instead of Ollama. */
  baseUrl?: string;
  /** `json_schema` or `json_object` for the OpenAI-compatible API (the eval's `--format`). */
  format?: string;
  /** Turn the model on even when neither policy nor environment does (the eval harness). */
  force?: boolean;
  /** fetch for both the model client and Forgejo lookups. */
  fetch?: typeof fetch;
}

/**
 * Builds the judge worker's {@link JudgeDeps} from the policy's `spec.judge` section and the
 * environment (`AGENT_JUDGE_MODEL`, `OLLAMA_HOST`, the API key variable, the Forgejo token
 * variable). Without an enabled model the deps judge by rules alone.
 */
export function createJudgeDepsFromEnv(
  policy: CompliancePolicy,
  env: NodeJS.ProcessEnv,
  overrides: JudgeDepsOverrides = {},
): Omit<JudgeDeps, 'baseDir'> & { baseDir?: string } {
  const settings = resolveModelSettings(policy, env, overrides);
  // baseDir only when asked for: the worker supplies its own and spreads these deps over it.
  const deps: Omit<JudgeDeps, 'baseDir'> & { baseDir?: string } = {
    ...(overrides.baseDir !== undefined ? { baseDir: overrides.baseDir } : {}),
    env,
    ...(overrides.fetch ? { fetch: overrides.fetch } : {}),
  };
  if (!settings) return deps;
  if (settings.host !== undefined) {
    try {
      new URL(settings.host.includes('://') ? settings.host : `http://${settings.host}`);
    } catch {
      throw new PolicyError(`judge host ${JSON.stringify(settings.host)} is not a valid host or URL`);
    }
  }
  deps.modelTimeoutMs = settings.timeoutMs;
  if (settings.openai) {
    deps.model = createOpenAIModel({
      baseUrl: settings.openai.baseUrl,
      model: settings.model,
      apiKey: env[settings.apiKeyEnv] || undefined,
      responseFormat: settings.openai.responseFormat,
      seed: policy.spec.judge?.seed ?? 0,
      maxAnswerTokens: settings.openai.maxAnswerTokens,
      maxRetries: settings.openai.maxRetries,
      fetch: overrides.fetch,
    });
    return deps;
  }
  if (settings.local) {
    const llm = openLocalLlm({ ...settings.local, baseDir: overrides.baseDir ?? process.cwd() });
    // Start loading now (a few seconds), so the first judgement does not spend its budget on it.
    llm.load().catch(() => {});
    deps.model = createLocalModel(llm);
    return deps;
  }
  deps.model = createOllamaModel({
    model: settings.model,
    host: settings.host,
    apiKey: env[settings.apiKeyEnv] || undefined,
    seed: policy.spec.judge?.seed ?? 0,
    think: policy.spec.judge?.think,
    fetch: overrides.fetch,
  });
  return deps;
}
