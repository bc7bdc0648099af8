import { Ollama } from 'ollama';
import { z } from 'zod';
import { describeIssues } from '../contracts/zod-error';
import { AgentJudgeError } from '../contracts/errors';
import { VerdictKindSchema, type JudgeAudit } from '../contracts/verdict';
import type { JudgePrompt } from './prompt';

/** The judge's default model (seed 000 §8). */
export const DEFAULT_JUDGE_MODEL = 'deepseek-v4-pro:cloud';

/** Longest `reason` a model may give: in the JSON Schema too, so a grammar ends the string. */
export const MAX_MODEL_REASON = 600;

/**
 * What the model must answer. The same schema produces the JSON Schema sent as Ollama's `format`
 * and the local backend's grammar, and validates the reply, because cloud models do not enforce
 * `format`.
 */
export const ModelAnswerSchema = z.strictObject({
  verdict: VerdictKindSchema,
  confidence: z.number().min(0).max(1),
  reason: z.string().min(1).max(MAX_MODEL_REASON),
  constraints: z
    .strictObject({
      files_only: z.array(z.string().min(1).max(4096)).max(1000).optional(),
      max_lines: z.int().nonnegative().optional(),
      no_existing_code_deletion: z.boolean().optional(),
      require_human_review: z.boolean().optional(),
      scope_limit: z.string().max(2048).optional(),
    })
    .optional(),
});
export type ModelAnswer = z.infer<typeof ModelAnswerSchema>;

/**
 * `format` for Ollama's structured output, and the local backend's grammar: what the model is asked to produce. It is
 * the answer schema with the suggested constraints bounded more tightly than the answer check does, because both
 * turn it into a grammar: a small model that starts repeating itself (the 270M test model listed one file name until
 * the token cap) is then made to close the list and the answer instead of being cut mid-string. Everything it allows,
 * {@link ModelAnswerSchema} accepts.
 */
export const MODEL_ANSWER_JSON_SCHEMA = z.toJSONSchema(
  ModelAnswerSchema.extend({
    constraints: ModelAnswerSchema.shape.constraints
      .unwrap()
      .extend({
        files_only: z.array(z.string().min(1).max(256)).max(16).optional(),
        scope_limit: z.string().max(512).optional(),
      })
      .optional(),
  }),
);

/**
 * The model is not there at all (nothing listens, the server does not have it, the GGUF cannot be
 * loaded), as opposed to a model that is slow or talks nonsense. The policy's
 * `spec.judge.withoutModel` then decides, as it does when no model is configured.
 */
export class ModelUnavailableError extends AgentJudgeError {}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatReply {
  content: string;
  promptTokens: number | null;
  completionTokens: number | null;
}

/**
 * The model behind the judge: one chat turn, bounded by `signal`. Prompting, validation and the
 * retry belong to the judge ({@link askModel}), so any backend only has to answer a chat.
 */
export interface ModelClient {
  readonly model: string;
  chat(messages: readonly ChatMessage[], options: { signal: AbortSignal }): Promise<ChatReply>;
}

export interface OllamaModelOptions {
  model: string;
  /** e.g. `http://127.0.0.1:11434` or `https://ollama.com`; ollama-js's default when omitted. */
  host?: string;
  /** Sent as `Authorization: Bearer` (ollama-js only adds it by itself for https://ollama.com). */
  apiKey?: string;
  seed?: number;
  think?: boolean;
  /** The fetch the client uses; the abort signal is added on top of it. */
  fetch?: typeof fetch;
}

/** A {@link ModelClient} over the official `ollama` client: temperature 0, JSON Schema output. */
export function createOllamaModel(options: OllamaModelOptions): ModelClient {
  const baseFetch = options.fetch ?? fetch;
  const headers = options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : undefined;
  return {
    model: options.model,
    async chat(messages, { signal }) {
      // Non-streaming calls take no abort signal in ollama-js: a per-call fetch adds it.
      const boundFetch: typeof fetch = (input, init) =>
        baseFetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal });
      const client = new Ollama({ host: options.host ?? '', fetch: boundFetch, headers });
      const reply = await client.chat({
        model: options.model,
        messages: messages.map((m) => ({ role: m.role, content: m.content })),
        format: MODEL_ANSWER_JSON_SCHEMA,
        options: { temperature: 0, seed: options.seed ?? 0 },
        ...(options.think === undefined ? {} : { think: options.think }),
        stream: false,
      });
      return {
        content: typeof reply.message?.content === 'string' ? reply.message.content : '',
        promptTokens: Number.isInteger(reply.prompt_eval_count) ? reply.prompt_eval_count : null,
        completionTokens: Number.isInteger(reply.eval_count) ? reply.eval_count : null,
      };
    },
  };
}

export type ParsedAnswer = { ok: true; answer: ModelAnswer } | { ok: false; error: string };

/**
 * Reads the model's reply: tolerates a `<think>` preamble and a Markdown code fence (both common
 * when `format` is not enforced), then requires exactly {@link ModelAnswerSchema}.
 */
export function parseModelAnswer(raw: string): ParsedAnswer {
  let text = raw.trim().replace(/^<think>[\s\S]*?<\/think>\s*/u, '');
  const fence = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/u.exec(text);
  if (fence) text = (fence[1] as string).trim();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `the answer is not JSON (${(err as Error).message})` };
  }
  const parsed = ModelAnswerSchema.safeParse(value);
  if (!parsed.success) return { ok: false, error: describeIssues('answer', parsed.error.issues) };
  return { ok: true, answer: parsed.data };
}

export type ModelOutcome =
  | { ok: true; answer: ModelAnswer; audit: JudgeAudit }
  /** `unavailable`: no model answered at all (see {@link ModelUnavailableError}). */
  | { ok: false; audit: JudgeAudit; unavailable: boolean };

/** True for an error that means no model is there, rather than one that misbehaved. */
export function isModelUnavailable(err: unknown): boolean {
  const e = err as { name?: string; status_code?: number; message?: string };
  if (e instanceof ModelUnavailableError) return true;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return false;
  // Ollama answers 404 "model ... not found" for a model it does not have.
  if (e?.name === 'ResponseError') return e.status_code === 404;
  // fetch() failing before any answer: connection refused, no such host.
  return e instanceof TypeError && /fetch failed/i.test(e.message ?? '');
}

const MAX_RAW = 64 * 1024;
const clip = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);

/** One readable line for a failed model call: timeout, HTTP error from the server, or unreachable. */
export function describeModelError(err: unknown, timeoutMs: number): string {
  const e = err as {
    name?: string;
    message?: string;
    status_code?: number;
    cause?: { message?: string; code?: string };
  };
  if (e?.name === 'TimeoutError' || (e?.name === 'AbortError' && e.message?.includes('timeout'))) {
    return `the model did not answer within ${timeoutMs} ms`;
  }
  if (e?.name === 'AbortError') return `the model call was aborted after the ${timeoutMs} ms budget`;
  if (e instanceof ModelUnavailableError) return e.message;
  if (e?.name === 'ResponseError') return `the model server answered HTTP ${e.status_code ?? '?'}: ${e.message ?? ''}`;
  const cause = e?.cause?.code ?? e?.cause?.message;
  return `the model could not be reached: ${e?.message ?? String(err)}${cause ? ` (${cause})` : ''}`;
}

export interface AskOptions {
  /** Budget for the whole conversation: first answer and the one retry together. */
  timeoutMs: number;
  /** Clock for latency (default performance.now). */
  clock?: () => number;
}

/**
 * Asks the model for a verdict. Invalid output is retried once with the validation error; a
 * timeout, an unreachable server or a second invalid answer is a failure with the reason in
 * `audit.error`. Never throws for model problems.
 */
export async function askModel(client: ModelClient, prompt: JudgePrompt, options: AskOptions): Promise<ModelOutcome> {
  const clock = options.clock ?? (() => performance.now());
  const started = clock();
  const signal = AbortSignal.timeout(options.timeoutMs);
  const messages: ChatMessage[] = [
    { role: 'system', content: prompt.system },
    { role: 'user', content: prompt.user },
  ];
  let promptTokens: number | null = null;
  let completionTokens: number | null = null;
  let raw: string | null = null;
  const add = (a: number | null, b: number | null) => (b === null ? a : (a ?? 0) + b);
  const audit = (error?: string): JudgeAudit => ({
    model: clip(client.model, 256),
    prompt_hash: prompt.hash,
    latency_ms: Math.max(0, Math.round((clock() - started) * 100) / 100),
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    raw_answer: raw === null ? null : clip(raw, MAX_RAW),
    ...(error === undefined ? {} : { error: clip(error, 4096) }),
  });

  for (let attempt = 1; attempt <= 2; attempt++) {
    let reply: ChatReply;
    try {
      reply = await client.chat(messages, { signal });
    } catch (err) {
      const why = signal.aborted
        ? `the model did not answer within ${options.timeoutMs} ms`
        : describeModelError(err, options.timeoutMs);
      return {
        ok: false,
        audit: audit(attempt === 1 ? why : `${why} (on the retry after invalid output)`),
        unavailable: !signal.aborted && isModelUnavailable(err),
      };
    }
    promptTokens = add(promptTokens, reply.promptTokens);
    completionTokens = add(completionTokens, reply.completionTokens);
    raw = reply.content;
    const parsed = parseModelAnswer(reply.content);
    if (parsed.ok) return { ok: true, answer: parsed.answer, audit: audit() };
    if (attempt === 2) {
      return { ok: false, audit: audit(`invalid model output twice: ${parsed.error}`), unavailable: false };
    }
    messages.push(
      { role: 'assistant', content: clip(reply.content, 8 * 1024) },
      {
        role: 'user',
        content:
          `Your answer was not valid: ${clip(parsed.error, 2000)}. ` +
          'Answer again with only the JSON object described in the instructions.',
      },
    );
  }
  /* c8 ignore next */
  return { ok: false, audit: audit('unreachable'), unavailable: false };
}
