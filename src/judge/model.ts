import { Ollama } from 'ollama';
import { AgentJudgeError } from '../contracts/errors';
import type { JudgeAudit } from '../contracts/verdict';
import { answerJsonSchema, parseModelAnswer, type ModelAnswer } from './answer';
import type { JudgePrompt } from './prompt';

export {
  MAX_MODEL_REASON,
  MODEL_ANSWER_JSON_SCHEMA,
  MODEL_ANSWER_JSON_SCHEMA_WITH_TASK,
  MODEL_ANSWER_STRICT_JSON_SCHEMA,
  MODEL_ANSWER_STRICT_JSON_SCHEMA_WITH_TASK,
  ModelAnswerSchema,
  parseModelAnswer,
  type ModelAnswer,
  type ParsedAnswer,
} from './answer';

/** The judge's default model (seed 000 §8). */
export const DEFAULT_JUDGE_MODEL = 'deepseek-v4-pro:cloud';

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

export interface ChatOptions {
  signal: AbortSignal;
  /** The prompt carries the user's task: the answer's schema then asks whether the action serves it. */
  userTask?: boolean;
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
  /**
   * The server cannot be held to the answer's JSON Schema (`json_object` mode): the prompt then states the schema
   * itself (src/judge/prompt.ts), so the prompt hash covers what the model really saw.
   */
  readonly schemaInPrompt?: boolean;
  chat(messages: readonly ChatMessage[], options: ChatOptions): Promise<ChatReply>;
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
    async chat(messages, { signal, userTask }) {
      // Non-streaming calls take no abort signal in ollama-js: a per-call fetch adds it.
      const boundFetch: typeof fetch = (input, init) =>
        baseFetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal });
      const client = new Ollama({ host: options.host ?? '', fetch: boundFetch, headers });
      const reply = await client.chat({
        model: options.model,
        messages: messages.map((m) => ({ role: m.role, content: m.content })),
        format: answerJsonSchema({ userTask: userTask === true }),
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

export type ModelOutcome =
  | { ok: true; answer: ModelAnswer; audit: JudgeAudit }
  /** `unavailable`: no model answered at all (see {@link ModelUnavailableError}). */
  | { ok: false; audit: JudgeAudit; unavailable: boolean };

/** True for an error that means no model is there, rather than one that misbehaved. */
export function isModelUnavailable(err: unknown): boolean {
  const e = err as { name?: string; status_code?: number; status?: number; message?: string };
  if (e instanceof ModelUnavailableError) return true;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return false;
  // Ollama answers 404 "model ... not found" for a model it does not have.
  if (e?.name === 'ResponseError') return e.status_code === 404;
  // The `openai` client: 404 for an unknown model, APIConnectionError when nothing answers at all.
  if (typeof e?.status === 'number') return e.status === 404;
  if (e?.name === 'APIConnectionError') return true;
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
    status?: number;
    cause?: { message?: string; code?: string; cause?: { code?: string } };
  };
  if (e?.name === 'TimeoutError' || (e?.name === 'AbortError' && e.message?.includes('timeout'))) {
    return `the model did not answer within ${timeoutMs} ms`;
  }
  if (e?.name === 'AbortError') return `the model call was aborted after the ${timeoutMs} ms budget`;
  if (e instanceof ModelUnavailableError) return e.message;
  if (e?.name === 'ResponseError') return `the model server answered HTTP ${e.status_code ?? '?'}: ${e.message ?? ''}`;
  // The `openai` client's APIError: its message already starts with the status ("429 Rate limit reached").
  if (typeof e?.status === 'number') return `the model server answered HTTP ${e.status}: ${e.message ?? ''}`;
  const cause = e?.cause?.code ?? e?.cause?.cause?.code ?? e?.cause?.message;
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
  let alignment: ModelAnswer['task_alignment'];
  const add = (a: number | null, b: number | null) => (b === null ? a : (a ?? 0) + b);
  const audit = (error?: string): JudgeAudit => ({
    model: clip(client.model, 256),
    prompt_hash: prompt.hash,
    latency_ms: Math.max(0, Math.round((clock() - started) * 100) / 100),
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    raw_answer: raw === null ? null : clip(raw, MAX_RAW),
    ...(prompt.userTaskHash ? { user_task_hash: prompt.userTaskHash } : {}),
    ...(alignment ? { task_alignment: alignment } : {}),
    ...(error === undefined ? {} : { error: clip(error, 4096) }),
  });

  for (let attempt = 1; attempt <= 2; attempt++) {
    let reply: ChatReply;
    try {
      reply = await client.chat(messages, { signal, userTask: prompt.userTaskHash !== undefined });
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
    const parsed = parseModelAnswer(reply.content, { requireTask: prompt.userTaskHash !== undefined });
    if (parsed.ok) {
      alignment = parsed.value.task_alignment;
      return { ok: true, answer: parsed.value, audit: audit() };
    }
    if (attempt === 2) {
      return { ok: false, audit: audit(`invalid model output twice: ${parsed.refusal.reason}`), unavailable: false };
    }
    messages.push(
      { role: 'assistant', content: clip(reply.content, 8 * 1024) },
      {
        role: 'user',
        content:
          `Your answer was not valid: ${clip(parsed.refusal.reason, 2000)}. ` +
          'Answer again with only the JSON object described in the instructions.',
      },
    );
  }
  /* c8 ignore next */
  return { ok: false, audit: audit('unreachable'), unavailable: false };
}
