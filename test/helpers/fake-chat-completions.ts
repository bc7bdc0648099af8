/**
 * A scripted OpenAI chat-completions API with tool calls on loopback, speaking the wire protocol an agent runtime's
 * `openai-completions` provider speaks (OpenClaw's): `POST /v1/chat/completions` with `stream: true` and the agent's
 * `tools`, answered as server-sent `chat.completion.chunk` events (the assistant's tool call or text, then
 * `finish_reason`, then a chunk with `usage`, then `[DONE]`). Each request is one model turn: the next scripted
 * answer. The tool results the runtime sends back (`role: "tool"` messages answering the assistant's `tool_calls`)
 * are what the model sees, and what a test asserts on ({@link toolResult}).
 *
 * A scripted fake fails on an unexpected request (another path, a wrong API key, a request that does not stream, no
 * answer left, a turn's `expect` not met) with a 400, which ends the runtime's turn at once, and on an unused answer:
 * call `assertDone()` at the end.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody, sendJson } from './http';

/** One message of the request (`role`: system, user, assistant, tool). */
export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface ChatRequestBody {
  model: string;
  stream?: boolean;
  messages: ChatMessage[];
  tools?: Array<{ type: string; function: { name: string } }>;
}

/** One model turn: a tool call or a final text, after an optional check of what the runtime sent. */
export type ChatTurn = ({ tool: string; args: Record<string, unknown> } | { text: string }) & {
  /** Throws (with a message) when the request is not what this turn expects; recorded as a problem. */
  expect?: (body: ChatRequestBody) => void;
};

/**
 * The text of the tool result the runtime sent the model for its call of `tool` with `args` (compared as JSON), or
 * undefined. Found by the call's id in the assistant's `tool_calls`, since runtimes rewrite the ids the model chose
 * (OpenClaw makes `call_1` into `call1`, and into another id again when one is taken in the session).
 */
export function toolResult(body: ChatRequestBody, tool: string, args: Record<string, unknown>): string | undefined {
  const want = JSON.stringify(args);
  const ids = new Set<string>();
  for (const m of body.messages) {
    for (const call of m.tool_calls ?? []) {
      if (call.function.name !== tool) continue;
      let sent: unknown;
      try {
        sent = JSON.parse(call.function.arguments);
      } catch {
        continue;
      }
      if (JSON.stringify(sent) === want) ids.add(call.id);
    }
  }
  const result = body.messages.find(
    (m) => m.role === 'tool' && m.tool_call_id !== undefined && ids.has(m.tool_call_id),
  );
  if (!result) return undefined;
  if (typeof result.content === 'string') return result.content;
  if (Array.isArray(result.content)) {
    return (result.content as Array<{ text?: unknown }>)
      .map((p) => (typeof p.text === 'string' ? p.text : ''))
      .join('');
  }
  return JSON.stringify(result.content);
}

export interface FakeChatCompletions {
  /** `http://127.0.0.1:PORT/v1`, a provider's `baseUrl`. */
  baseUrl: string;
  calls: ChatRequestBody[];
  problems: string[];
  /** Throws on any problem or unused turn. */
  assertDone(): void;
  close(): Promise<void>;
}

/** Starts the fake on 127.0.0.1 with a free port; every request must carry `Authorization: Bearer <apiKey>`. */
export async function startFakeChatCompletions(apiKey: string, script: ChatTurn[]): Promise<FakeChatCompletions> {
  const queue = [...script];
  const calls: ChatRequestBody[] = [];
  const problems: string[] = [];
  const refuse = (res: Parameters<typeof sendJson>[0], why: string) => {
    problems.push(why);
    sendJson(res, 400, {
      error: { message: `fake-chat-completions: ${why}`, type: 'invalid_request_error', code: null },
    });
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        refuse(res, `unexpected request ${req.method} ${req.url}`);
        return;
      }
      if (req.headers.authorization !== `Bearer ${apiKey}`) {
        refuse(res, `request without the API key (authorization: ${req.headers.authorization ?? 'none'})`);
        return;
      }
      let body: ChatRequestBody;
      try {
        body = JSON.parse(await readBody(req)) as ChatRequestBody;
      } catch {
        refuse(res, 'request body is not JSON');
        return;
      }
      const index = calls.length;
      calls.push(body);
      if (body.stream !== true || !Array.isArray(body.messages)) {
        refuse(res, `request #${index + 1} is not a streaming chat-completions request`);
        return;
      }
      const turn = queue.shift();
      if (!turn) {
        refuse(res, `unexpected request #${index + 1}: no scripted turn left`);
        return;
      }
      try {
        turn.expect?.(body);
      } catch (err) {
        refuse(res, `request #${index + 1}: ${(err as Error).message}`);
        return;
      }
      const id = `chatcmpl-fake-${index}`;
      const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => {
        const data = { id, object: 'chat.completion.chunk', created: 0, model: body.model, choices, ...extra };
        res.write(`data: ${JSON.stringify(data)}\n\n`);
      };
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      if ('tool' in turn) {
        const call = {
          index: 0,
          id: `call_${index + 1}`,
          type: 'function',
          function: { name: turn.tool, arguments: JSON.stringify(turn.args) },
        };
        chunk([{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: null }]);
        chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]);
      } else {
        chunk([{ index: 0, delta: { role: 'assistant', content: turn.text }, finish_reason: null }]);
        chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]);
      }
      chunk([], { usage: { prompt_tokens: 500, completion_tokens: 40, total_tokens: 540 } });
      res.end('data: [DONE]\n\n');
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    calls,
    problems,
    assertDone() {
      const all = [...problems];
      if (queue.length > 0) all.push(`${queue.length} scripted turn(s) never used`);
      if (all.length > 0) throw new Error(`fake-chat-completions: ${all.join('; ')}`);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
