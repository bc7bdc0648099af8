/**
 * An Ollama-compatible server on loopback over a real local model (node-llama-cpp): `/api/tags`
 * lists the one model, `/api/chat` (non-streaming) answers with it, holding the answer to the
 * request's `format` JSON Schema and `options.num_predict`. It lets the judge's Ollama path, with
 * the real `ollama` client, meet a real model where no Ollama can be installed.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalLlm } from '../../src/judge/local';
import { readBody, sendJson } from './http';

export interface OllamaShim {
  host: string;
  /** The model name `/api/tags` lists and `/api/chat` accepts. */
  model: string;
  calls: number;
  close(): Promise<void>;
}

interface ChatBody {
  model?: string;
  messages?: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>;
  format?: unknown;
  stream?: boolean;
  options?: { num_predict?: number };
}

/** Serves `llm` as model `model` on 127.0.0.1 (free port). */
export async function startOllamaShim(llm: LocalLlm, model = 'gemma3:270m'): Promise<OllamaShim> {
  let calls = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method === 'GET' && req.url === '/api/tags') {
        sendJson(res, 200, { models: [{ name: model, model, modified_at: new Date().toISOString(), size: 0 }] });
        return;
      }
      if (req.method !== 'POST' || req.url !== '/api/chat') {
        sendJson(res, 404, { error: '404 page not found' });
        return;
      }
      let body: ChatBody;
      try {
        body = JSON.parse(await readBody(req)) as ChatBody;
      } catch {
        sendJson(res, 400, { error: 'invalid JSON body' });
        return;
      }
      if (body.model !== model) {
        sendJson(res, 404, { error: `model "${body.model}" not found, try pulling it first` });
        return;
      }
      if (body.stream !== false) {
        sendJson(res, 400, { error: 'this shim answers stream: false only' });
        return;
      }
      calls += 1;
      // The client going away (its timeout) stops the generation.
      const abort = new AbortController();
      res.on('close', () => abort.abort(new Error('client closed the connection')));
      const started = process.hrtime.bigint();
      try {
        const reply = await llm.chat(body.messages ?? [], {
          signal: abort.signal,
          ...(body.format && typeof body.format === 'object' ? { jsonSchema: body.format } : {}),
          ...(body.options?.num_predict ? { maxTokens: body.options.num_predict } : {}),
        });
        const ns = Number(process.hrtime.bigint() - started);
        sendJson(res, 200, {
          model,
          created_at: new Date().toISOString(),
          message: { role: 'assistant', content: reply.content },
          done: true,
          done_reason: reply.stopReason === 'maxTokens' ? 'length' : 'stop',
          total_duration: ns,
          prompt_eval_count: reply.promptTokens,
          eval_count: reply.completionTokens,
        });
      } catch (err) {
        if (!res.destroyed) sendJson(res, 500, { error: (err as Error).message });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: `http://127.0.0.1:${port}`,
    model,
    get calls() {
      return calls;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
