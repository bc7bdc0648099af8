/**
 * The local judge backend: a GGUF model run inside the judge process by node-llama-cpp (an
 * optional dependency; only its prebuilt CPU binary is used, no install script). It answers the
 * same chat as the Ollama path, so prompting, validation, retry, timeouts and audit stay in
 * {@link askModel}; the answer is held to the same JSON Schema by a grammar.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type * as LlamaCpp from 'node-llama-cpp';
import type { ChatHistoryItem, Llama, LlamaChat, LlamaContext, LlamaGrammar, LlamaModel } from 'node-llama-cpp';
import { answerJsonSchema } from './answer';
import { ModelUnavailableError, type ChatMessage, type ModelClient } from './model';

export interface LocalModelOptions {
  /** Path to the .gguf file. */
  gguf: string;
  /** Directory a relative `gguf` resolves against (default: cwd). */
  baseDir?: string;
  /** CPU threads; default {@link defaultLocalThreads} (more threads than cores is far slower). */
  threads?: number;
  /** Cap on the answer in tokens: a runaway answer is cut there (and then fails validation). */
  maxAnswerTokens?: number;
  /** Context window in tokens. */
  contextSize?: number;
  /** Name in the audit record; default `local:<file name>`. */
  name?: string;
}

/**
 * The local model's default thread count: every core but one, and at least one. The one left over keeps the judge
 * worker's own event loop (Temporal polling, heartbeats, the HTTP of evidence checks) from competing with the
 * model; on a 2-core machine that is a single thread, which measured faster than two there (docs/bench.md: 1 vs 2
 * threads under load).
 */
export function defaultLocalThreads(cores = availableParallelism()): number {
  return Math.max(1, cores - 1);
}

/** One chat turn on a loaded model, optionally held to a JSON Schema (Ollama's `format`). */
export interface LocalChatOptions {
  signal: AbortSignal;
  /** JSON Schema the answer must follow (a grammar); none: free text. */
  jsonSchema?: object;
  maxTokens?: number;
}

export interface LocalChatReply {
  content: string;
  promptTokens: number;
  completionTokens: number;
  /** Why generation stopped: `maxTokens` means the answer was cut. */
  stopReason: string;
}

/** A GGUF model loaded once and shared by the judgements of one process, one at a time. */
export interface LocalLlm {
  readonly name: string;
  readonly threads: number;
  /** Loads the model now (otherwise on the first chat); throws {@link ModelUnavailableError}. */
  load(): Promise<void>;
  chat(messages: readonly ChatMessage[], options: LocalChatOptions): Promise<LocalChatReply>;
  dispose(): Promise<void>;
}

interface Loaded {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  chat: LlamaChat;
  grammars: Map<string, Promise<LlamaGrammar>>;
}

/** The JSON Schema as a llama grammar accepts it (no `$schema` key). */
function grammarSchema(schema: object): object {
  const { $schema: _drop, ...rest } = schema as Record<string, unknown>;
  return rest;
}

/** Opens a GGUF model for chat. Loading starts on {@link LocalLlm.load} or the first chat. */
export function openLocalLlm(options: LocalModelOptions): LocalLlm {
  const path = resolve(options.baseDir ?? process.cwd(), options.gguf);
  const threads = options.threads ?? defaultLocalThreads();
  const maxAnswerTokens = options.maxAnswerTokens ?? 384;
  const name = options.name ?? `local:${path.split('/').pop() ?? path}`;
  let loading: Promise<Loaded> | undefined;
  // One context sequence: judgements take turns, in arrival order.
  let queue: Promise<unknown> = Promise.resolve();

  const load = (): Promise<Loaded> => {
    loading ??= (async () => {
      let lib: typeof LlamaCpp;
      try {
        lib = await import('node-llama-cpp');
      } catch (err) {
        throw new ModelUnavailableError(
          'the local judge needs the optional dependency node-llama-cpp ' +
            `(npm install -E node-llama-cpp@3.21.1): ${(err as Error).message}`,
        );
      }
      try {
        const llama = await lib.getLlama({ gpu: false, build: 'never', logLevel: lib.LlamaLogLevel.error });
        const model = await llama.loadModel({ modelPath: path });
        const context = await model.createContext({ contextSize: options.contextSize ?? 4096, threads });
        const chat = new lib.LlamaChat({ contextSequence: context.getSequence() });
        return { llama, model, context, chat, grammars: new Map() };
      } catch (err) {
        throw new ModelUnavailableError(`the local model ${path} could not be loaded: ${(err as Error).message}`);
      }
    })();
    // A failed load is retried on the next judgement (the file may appear later).
    loading.catch(() => {
      loading = undefined;
    });
    return loading;
  };

  const grammarFor = (loaded: Loaded, schema: object): Promise<LlamaGrammar> => {
    const key = JSON.stringify(schema);
    let g = loaded.grammars.get(key);
    if (!g) {
      g = loaded.llama.createGrammarForJsonSchema(grammarSchema(schema) as never) as Promise<LlamaGrammar>;
      loaded.grammars.set(key, g);
    }
    return g;
  };

  const turn = async (messages: readonly ChatMessage[], opts: LocalChatOptions): Promise<LocalChatReply> => {
    opts.signal.throwIfAborted();
    const loaded = await load();
    opts.signal.throwIfAborted();
    const history: ChatHistoryItem[] = messages.map((m) =>
      m.role === 'system'
        ? { type: 'system', text: m.content }
        : m.role === 'user'
          ? { type: 'user', text: m.content }
          : { type: 'model', response: [m.content] },
    );
    history.push({ type: 'model', response: [] });
    const meter = loaded.chat.sequence.tokenMeter;
    const before = { input: meter.usedInputTokens, output: meter.usedOutputTokens };
    const grammar = opts.jsonSchema ? await grammarFor(loaded, opts.jsonSchema) : undefined;
    const reply = await loaded.chat.generateResponse(history, {
      ...(grammar ? { grammar } : {}),
      maxTokens: opts.maxTokens ?? maxAnswerTokens,
      temperature: 0,
      signal: opts.signal,
    });
    return {
      content: reply.response,
      promptTokens: meter.usedInputTokens - before.input,
      completionTokens: meter.usedOutputTokens - before.output,
      stopReason: reply.metadata.stopReason,
    };
  };

  return {
    name,
    threads,
    async load() {
      await load();
    },
    chat(messages, opts) {
      const waitAbort = new Promise<never>((_, reject) => {
        if (opts.signal.aborted) reject(opts.signal.reason as Error);
        opts.signal.addEventListener('abort', () => reject(opts.signal.reason as Error), { once: true });
      });
      waitAbort.catch(() => {});
      const mine = queue.then(() => turn(messages, opts));
      queue = mine.catch(() => {});
      return Promise.race([mine, waitAbort]);
    },
    async dispose() {
      const l = await loading?.catch(() => undefined);
      loading = undefined;
      if (!l) return;
      l.chat.dispose();
      await l.context.dispose();
      await l.model.dispose();
    },
  };
}

/** A {@link ModelClient} over a local GGUF model: temperature 0, the answer held to the judge's schema. */
export function createLocalModel(
  llm: LocalLlm,
  options: { maxAnswerTokens?: number } = {},
): ModelClient & { llm: LocalLlm } {
  return {
    model: llm.name,
    llm,
    async chat(messages, { signal, userTask }) {
      const reply = await llm.chat(messages, {
        signal,
        jsonSchema: answerJsonSchema({ userTask: userTask === true }),
        ...(options.maxAnswerTokens ? { maxTokens: options.maxAnswerTokens } : {}),
      });
      return { content: reply.content, promptTokens: reply.promptTokens, completionTokens: reply.completionTokens };
    },
  };
}
