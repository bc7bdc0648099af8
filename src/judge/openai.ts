/**
 * The OpenAI-compatible backend: any server speaking the chat-completions API (OpenAI, DeepSeek, OpenRouter, vLLM,
 * llama.cpp's server, LM Studio, Ollama's `/v1`), reached through the official `openai` client, so request shapes,
 * error types and `retry-after` handling are the provider's own rather than hand-written here. It answers the same
 * chat as the Ollama and local backends: prompting, validation, the one retry on invalid output, the time budget and
 * the audit fields stay in {@link askModel}.
 */
import OpenAI from 'openai';
import type { OpenAIResponseFormat } from '../contracts/judge-settings';
import { answerJsonSchema } from './answer';
import type { ChatMessage, ChatOptions, ChatReply, ModelClient } from './model';

export interface OpenAIModelOptions {
  /** e.g. `https://api.openai.com/v1`, `http://127.0.0.1:8080/v1`. */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer`; without one no Authorization header is sent (local servers). */
  apiKey?: string;
  /**
   * `json_schema`: strict structured output with the strict answer schema (src/judge/answer.ts). `json_object`:
   * JSON mode, the schema stated in the prompt (the prompt also says "JSON", which DeepSeek requires).
   */
  responseFormat?: OpenAIResponseFormat;
  seed?: number;
  /** `max_tokens` for the answer; unset: the server's default. */
  maxAnswerTokens?: number;
  /** Retries of 408/409/429/5xx answers by the client (honouring `retry-after`), always inside the time budget. */
  maxRetries?: number;
  /** The fetch the client uses (tests, proxies). */
  fetch?: typeof fetch;
}

/** The name the strict schema is sent under (`response_format.json_schema.name`). */
export const ANSWER_SCHEMA_NAME = 'agent_judge_verdict';

/** Rejects when `signal` aborts, so a client sleeping out a long `retry-after` cannot outlive the judge's budget. */
function abortedBy(signal: AbortSignal): Promise<never> {
  const p = new Promise<never>((_resolve, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });
  p.catch(() => {});
  return p;
}

/** A {@link ModelClient} over an OpenAI-compatible server: temperature 0, a seed, the answer's schema. */
export function createOpenAIModel(options: OpenAIModelOptions): ModelClient {
  const format = options.responseFormat ?? 'json_schema';
  // Everything the client would otherwise read from the environment (OPENAI_BASE_URL, OPENAI_ORG_ID, ...) is given
  // here, so the judge talks to the configured server only, with the configured key only.
  const client = new OpenAI({
    baseURL: options.baseUrl,
    apiKey: options.apiKey ?? 'no-key',
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    maxRetries: options.maxRetries ?? 2,
    ...(options.apiKey ? {} : { defaultHeaders: { Authorization: null } }),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const responseFormat = (userTask: boolean) =>
    format === 'json_schema'
      ? {
          type: 'json_schema' as const,
          json_schema: { name: ANSWER_SCHEMA_NAME, strict: true, schema: answerJsonSchema({ strict: true, userTask }) },
        }
      : { type: 'json_object' as const };
  return {
    model: options.model,
    schemaInPrompt: format === 'json_object',
    async chat(messages: readonly ChatMessage[], { signal, userTask }: ChatOptions): Promise<ChatReply> {
      const request = client.chat.completions.create(
        {
          model: options.model,
          messages: messages.map((m) => ({ role: m.role, content: m.content })),
          temperature: 0,
          seed: options.seed ?? 0,
          response_format: responseFormat(userTask === true),
          ...(options.maxAnswerTokens ? { max_tokens: options.maxAnswerTokens } : {}),
        },
        { signal },
      );
      const completion = await Promise.race([request, abortedBy(signal)]);
      const message = completion.choices?.[0]?.message;
      // A strict-mode refusal has no content: hand it to the answer check as what it is, so it is retried once and
      // then ends as a judge failure like any other unusable answer.
      const content =
        typeof message?.content === 'string' && message.content !== ''
          ? message.content
          : typeof message?.refusal === 'string' && message.refusal !== ''
            ? `(the model refused: ${message.refusal})`
            : '';
      const usage = completion.usage;
      return {
        content,
        promptTokens: Number.isInteger(usage?.prompt_tokens) ? (usage?.prompt_tokens ?? null) : null,
        completionTokens: Number.isInteger(usage?.completion_tokens) ? (usage?.completion_tokens ?? null) : null,
      };
    },
  };
}

export type OpenAIProbe = { found: true } | { found: false; why: string };

/** Asks an OpenAI-compatible server (bounded by `timeoutMs`) whether it lists `model`. Never throws. */
export async function probeOpenAIModel(
  baseUrl: string,
  model: string,
  options: { timeoutMs?: number; apiKey?: string; fetch?: typeof fetch } = {},
): Promise<OpenAIProbe> {
  const timeoutMs = options.timeoutMs ?? 1500;
  const signal = AbortSignal.timeout(timeoutMs);
  const client = new OpenAI({
    baseURL: baseUrl,
    apiKey: options.apiKey ?? 'no-key',
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    maxRetries: 0,
    ...(options.apiKey ? {} : { defaultHeaders: { Authorization: null } }),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  try {
    const ids: string[] = [];
    const listing = client.models.list({ signal });
    for await (const m of await Promise.race([listing, abortedBy(signal)])) {
      ids.push(m.id);
      if (ids.length >= 1000) break;
    }
    if (ids.includes(model)) return { found: true };
    const some = ids.slice(0, 5);
    return {
      found: false,
      why: `the server lists no ${model} (it lists ${some.length > 0 ? some.join(', ') : 'none'})`,
    };
  } catch (err) {
    if (signal.aborted) return { found: false, why: `no server answered within ${timeoutMs} ms` };
    const e = err as { status?: number; message?: string; cause?: { code?: string; cause?: { code?: string } } };
    if (typeof e.status === 'number') return { found: false, why: `listing models answered HTTP ${e.status}` };
    return {
      found: false,
      why: `no server answers (${e.cause?.code ?? e.cause?.cause?.code ?? e.message ?? String(err)})`,
    };
  }
}
