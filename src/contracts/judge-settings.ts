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

/** How an OpenAI-compatible server is held to the answer's shape (`spec.judge.openai.responseFormat`). */
export const OpenAIResponseFormatSchema = z.enum(['json_schema', 'json_object']);
export type OpenAIResponseFormat = z.infer<typeof OpenAIResponseFormatSchema>;

/** The choices for `spec.judge.withoutModel`. */
export const WithoutModelSchema = z.enum(['escalate', 'clarify', 'approve']);
export type WithoutModel = z.infer<typeof WithoutModelSchema>;

/**
 * The policy's `spec.judge` section: the model-backed judge and evidence verification. Secrets
 * never live here, only the names of the environment variables that hold them.
 */
export const JudgeSettingsSchema = z.strictObject({
  /** Turns the model on or off; when omitted, setting `model` (or `local`) turns it on. */
  enabled: z.boolean().optional(),
  /**
   * What a rules-clean full-judge-review proposal gets when no model can review it (none
   * configured, none found, or the configured one unreachable): `escalate` to a person (the
   * dispute says no model reviewed it), `clarify` with the actor, or `approve` on the rules alone.
   */
  withoutModel: WithoutModelSchema.default('escalate'),
  /**
   * A local GGUF model run in the judge process through node-llama-cpp (an optional dependency),
   * instead of Ollama. Same prompt, schema, timeouts, retry and audit fields as the Ollama path.
   */
  local: z
    .strictObject({
      /** Path to the .gguf file (relative paths resolve against the judge worker's directory). */
      gguf: z.string().min(1).max(4096),
      /** CPU threads; default: every core but one, at least one (one on a 2-core machine; docs/bench.md). */
      threads: z.int().positive().max(256).optional(),
      /** Cap on the answer's length in tokens, so a runaway answer is cut. */
      maxAnswerTokens: z.int().positive().max(8192).default(384),
      /** Context window in tokens (prompt, answer and the one retry). */
      contextSize: z.int().min(512).max(131_072).default(4096),
    })
    .optional(),
  /**
   * A model behind an OpenAI-compatible chat-completions API (OpenAI, DeepSeek, OpenRouter, vLLM, llama.cpp's
   * server, LM Studio, Ollama's `/v1`) instead of Ollama's own API. Same prompt, timeouts, retry and audit fields.
   */
  openai: z
    .strictObject({
      /** The API base, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`; `AGENT_JUDGE_OPENAI_BASE_URL` wins. */
      baseUrl: HttpBaseUrl,
      /** The model name the server knows; `AGENT_JUDGE_OPENAI_MODEL` wins. */
      model: z.string().min(1).max(256),
      /** Environment variable holding the API key, sent as a Bearer token (none sent when it is unset). */
      apiKeyEnv: EnvVarName.default('OPENAI_API_KEY'),
      /**
       * `json_schema`: strict structured output with the answer's schema (OpenAI, llama.cpp, vLLM); `json_object`:
       * JSON mode with the schema stated in the prompt, for providers without schema support (DeepSeek).
       */
      responseFormat: OpenAIResponseFormatSchema.default('json_schema'),
      /** Cap on the answer in tokens (`max_tokens`); unset: the server's default. */
      maxAnswerTokens: z.int().positive().max(8192).optional(),
      /** Retries of 429 and 5xx answers inside the time budget (the client honours `retry-after`). */
      maxRetries: z.int().min(0).max(5).default(2),
    })
    .optional(),
  /**
   * Rules of the policy in words, for the judge model (trusted: the policy author's, never an actor's). Each is shown
   * as a policy fact for the action types it names (all types when none are named). Rules cannot check them; a
   * model can.
   */
  statedRules: z
    .array(
      z.strictObject({
        name: z
          .string()
          .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'expected a lower-case rule name such as no-car-without-license'),
        actionTypes: z
          .array(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'expected a snake_case action type'))
          .max(64)
          .optional(),
        text: z.string().min(1).max(2000),
      }),
    )
    .max(50)
    .optional(),
  /** Ollama model name (default `deepseek-v4-pro:cloud`); `AGENT_JUDGE_MODEL` overrides it. */
  model: z.string().min(1).max(256).optional(),
  /** Ollama host, e.g. `http://127.0.0.1:11434` or `https://ollama.com`; else `$OLLAMA_HOST`. */
  host: z.string().min(1).max(2048).optional(),
  /** Environment variable holding the Ollama API key (sent as a Bearer token when set). */
  apiKeyEnv: EnvVarName.default('OLLAMA_API_KEY'),
  /** Budget for the whole model conversation (first answer and the one retry together). */
  timeoutMs: z.int().positive().max(600_000).default(20_000),
  /**
   * What the judge activity's start-to-close timeout allows beyond `timeoutMs` and the Forgejo lookups (default
   * 10000), so the judge reports its own timeout before Temporal cuts it off; twice the total is the schedule-to-close
   * timeout that ends the wait when no judge worker polls. The workflow worker's snapshot decides it.
   */
  slackMs: z.int().positive().max(600_000).optional(),
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

/** The judge activity's timeout; workflow code imports it from `./judge-timeout`, which builds no schema. */
export { judgeActivityTimeoutMs } from './judge-timeout';
