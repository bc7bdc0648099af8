/**
 * A scripted OpenAI-compatible chat-completions API on loopback, speaking the real wire protocol so tests drive it
 * with the official `openai` client: `POST /v1/chat/completions` answered as one `chat.completion` object with
 * `usage`, errors as non-2xx `{ "error": { "message", "type", "code" } }` with optional headers (`retry-after`), and
 * `GET /v1/models`. It exists only for the provider quirks a real local server cannot show: a schema accepted but
 * not enforced, a blank answer, 429 with retry-after, 5xx. Everything else is tested against llama.cpp's own server
 * (test/helpers/openai-server.ts).
 *
 * A scripted fake fails on an unexpected call and on an unused answer: call `assertDone()` at the end of each test.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody, sendJson } from './http';

export interface CompletionRequestBody {
  model: string;
  messages: Array<{ role: string; content: string }>;
  temperature?: number;
  seed?: number;
  max_tokens?: number;
  response_format?: { type: string; json_schema?: { name: string; strict?: boolean; schema: unknown } };
  stream?: boolean;
}

export type FakeCompletion =
  | { content: string | null; refusal?: string; delayMs?: number; promptTokens?: number; completionTokens?: number }
  | { status: number; message: string; headers?: Record<string, string>; delayMs?: number };

export interface FakeOpenAI {
  /** `http://127.0.0.1:PORT/v1`, what `new OpenAI({ baseURL })` takes. */
  baseUrl: string;
  calls: CompletionRequestBody[];
  headers: Array<Record<string, string | string[] | undefined>>;
  problems: string[];
  assertDone(): void;
  close(): Promise<void>;
}

/** Starts the fake on 127.0.0.1 with a free port; `models` is what `GET /v1/models` lists. */
export async function startFakeOpenAI(script: FakeCompletion[], models: string[] = []): Promise<FakeOpenAI> {
  const queue = [...script];
  const calls: CompletionRequestBody[] = [];
  const headers: Array<Record<string, string | string[] | undefined>> = [];
  const problems: string[] = [];
  const pending = new Set<NodeJS.Timeout>();

  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        sendJson(res, 200, {
          object: 'list',
          data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake' })),
        });
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        problems.push(`unexpected request ${req.method} ${req.url}`);
        sendJson(res, 404, { error: { message: 'not found', type: 'invalid_request_error', code: null } });
        return;
      }
      let body: CompletionRequestBody;
      try {
        body = JSON.parse(await readBody(req)) as CompletionRequestBody;
      } catch {
        problems.push('request body is not JSON');
        sendJson(res, 400, { error: { message: 'invalid JSON', type: 'invalid_request_error', code: null } });
        return;
      }
      const index = calls.length;
      calls.push(body);
      headers.push({ ...req.headers });
      const answer = queue.shift();
      if (!answer) {
        problems.push(`unexpected call #${index + 1}: no scripted answer left`);
        sendJson(res, 500, { error: { message: 'fake-openai: unexpected call', type: 'server_error', code: null } });
        return;
      }
      const reply = () => {
        if (res.destroyed) return;
        if ('status' in answer) {
          const text = JSON.stringify({ error: { message: answer.message, type: 'error', code: answer.status } });
          res.writeHead(answer.status, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(text),
            ...answer.headers,
          });
          res.end(text);
          return;
        }
        sendJson(res, 200, {
          id: `chatcmpl-fake-${index}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: answer.content, refusal: answer.refusal ?? null },
              finish_reason: 'stop',
              logprobs: null,
            },
          ],
          usage: {
            prompt_tokens: answer.promptTokens ?? 500,
            completion_tokens: answer.completionTokens ?? 40,
            total_tokens: (answer.promptTokens ?? 500) + (answer.completionTokens ?? 40),
          },
        });
      };
      if (answer.delayMs) {
        const t = setTimeout(() => {
          pending.delete(t);
          reply();
        }, answer.delayMs);
        pending.add(t);
        res.on('close', () => {
          clearTimeout(t);
          pending.delete(t);
        });
      } else {
        reply();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    calls,
    headers,
    problems,
    assertDone() {
      const all = [...problems];
      if (queue.length > 0) all.push(`${queue.length} scripted answer(s) never used`);
      if (all.length > 0) throw new Error(`fake-openai: ${all.join('; ')}`);
    },
    async close() {
      for (const t of pending) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
