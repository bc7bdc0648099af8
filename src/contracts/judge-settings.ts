import { z } from 'zod';

const EnvVarName = z
  .string()
  .regex(/^[A-Z_][A-Z0-9_]{0,127}$/, 'expected an environment variable name such as FORGEJO_TOKEN');
const HttpBaseUrl = z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }).max(2048);
/** A host as `URL.host` spells it: lower-case, punycode, with `:port` when not the default. */
const HostName = z
  .string()
  .regex(
    /^[a-z0-9.-]{1,253}(?::\d{1,5})?$/,
    'expected a lower-case host name such as forgejo.example.com or host:8443',
  );

/**
 * The policy's `spec.judge` section: the model-backed judge and evidence verification. Secrets
 * never live here, only the names of the environment variables that hold them.
 */
export const JudgeSettingsSchema = z.strictObject({
  /** Turns the model on or off; when omitted, setting `model` turns it on. */
  enabled: z.boolean().optional(),
  /** Ollama model name (default `deepseek-v4-pro:cloud`); `AGENT_JUDGE_MODEL` overrides it. */
  model: z.string().min(1).max(256).optional(),
  /** Ollama host, e.g. `http://127.0.0.1:11434` or `https://ollama.com`; else `$OLLAMA_HOST`. */
  host: z.string().min(1).max(2048).optional(),
  /** Environment variable holding the Ollama API key (sent as a Bearer token when set). */
  apiKeyEnv: EnvVarName.default('OLLAMA_API_KEY'),
  /** Budget for the whole model conversation (first answer and the one retry together). */
  timeoutMs: z.int().positive().max(600_000).default(20_000),
  /** Sampling seed; with temperature 0 it keeps answers as repeatable as the model allows. */
  seed: z.int().nonnegative().default(0),
  /** Passed to Ollama's `think` for reasoning models; omitted when unset. */
  think: z.boolean().optional(),
  /**
   * Hosts an issue or PR URL in `cited_evidence` may point at. Empty: hosts cannot be checked and
   * such evidence counts as unverifiable; non-empty: any other host fails verification.
   */
  allowedEvidenceHosts: z.array(HostName).max(100).default([]),
  /** When set, cited issues and PRs on the Forgejo host are looked up through its REST API. */
  forgejo: z
    .strictObject({
      /** REST API base, e.g. `https://os.scoble.me/forgejo/api/v1`. */
      apiBaseUrl: HttpBaseUrl,
      /** Web base that evidence URLs start with; default: apiBaseUrl without `/api/v1`. */
      webUrl: HttpBaseUrl.optional(),
      /** Environment variable holding a read-only Forgejo token (optional for public repos). */
      tokenEnv: EnvVarName.default('FORGEJO_TOKEN'),
      timeoutMs: z.int().positive().max(60_000).default(5_000),
    })
    .optional(),
});
export type JudgeSettings = z.infer<typeof JudgeSettingsSchema>;

/**
 * A start-to-close timeout for the judge activity that always outlasts the judge itself: the model
 * budget, plus the Forgejo lookups, plus slack. A judge that hits its own budget answers
 * confidence 0 instead of being cut off by Temporal. Pure (no I/O), so workflow code may call it.
 */
export function judgeActivityTimeoutMs(policy: { spec: { judge?: JudgeSettings } }): number {
  const s = policy.spec.judge;
  return (s?.timeoutMs ?? 20_000) + (s?.forgejo?.timeoutMs ?? 0) + 10_000;
}
