/**
 * A scripted OpenAI Responses API on loopback, speaking the wire protocol the Codex CLI speaks to a custom model
 * provider (`model_providers.<id>.wire_api = "responses"`): `POST /v1/responses` with `stream: true`, answered as a
 * server-sent event stream `response.created`, then `response.output_item.added` / `response.output_item.done` for
 * each output item (an assistant `message`, a `function_call` such as `exec_command`, a `custom_tool_call` such as
 * `apply_patch`), then `response.completed` with `usage`. Each request is one model turn: the next scripted answer.
 * The tool outputs Codex sends back (`function_call_output`, `custom_tool_call_output` in the next request's
 * `input`) are what the model sees, and what a test asserts on.
 *
 * A scripted fake fails on an unexpected request (another path, a wrong API key, no answer left) and on an unused
 * answer: call `assertDone()` at the end of each test.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody, sendJson } from './http';

/** One item of the request's `input` or of a response's `output` (the Responses API's item shapes). */
export type ResponseItem = Record<string, unknown> & { type: string };

export interface ResponsesRequestBody {
  model: string;
  stream?: boolean;
  input: ResponseItem[];
  tools?: Array<Record<string, unknown>>;
}

/** One model turn: the items the model answers with, after an optional check of what Codex sent. */
export interface FakeTurn {
  output: ResponseItem[];
  /** Throws (with a message) when the request is not what this turn expects; recorded as a problem. */
  expect?: (body: ResponsesRequestBody) => void;
}

/** The model runs a shell command with Codex's `exec_command` tool. */
export function shellCall(callId: string, cmd: string): ResponseItem {
  return {
    type: 'function_call',
    id: `fc_${callId}`,
    call_id: callId,
    name: 'exec_command',
    arguments: JSON.stringify({ cmd, login: false }),
  };
}

/** The model edits files with Codex's freeform `apply_patch` tool (the patch is the tool's whole input). */
export function patchCall(callId: string, patch: string): ResponseItem {
  return { type: 'custom_tool_call', id: `ctc_${callId}`, call_id: callId, name: 'apply_patch', input: patch };
}

/** The model's final answer of a turn. */
export function message(text: string): ResponseItem {
  return {
    type: 'message',
    id: `msg_${Buffer.from(text).toString('hex').slice(0, 16)}`,
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
}

/** The text of the tool output Codex sent the model for `callId` in this request, or undefined. */
export function toolOutput(body: ResponsesRequestBody, callId: string): string | undefined {
  const item = body.input.find(
    (i) => (i.type === 'function_call_output' || i.type === 'custom_tool_call_output') && i.call_id === callId,
  );
  if (!item) return undefined;
  const output = item.output;
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    return (output as Array<{ text?: unknown }>)
      .map((part) => (typeof part.text === 'string' ? part.text : ''))
      .join('');
  }
  return JSON.stringify(output);
}

export interface FakeResponsesApi {
  /** `http://127.0.0.1:PORT/v1`, what `model_providers.<id>.base_url` takes. */
  baseUrl: string;
  calls: ResponsesRequestBody[];
  problems: string[];
  /** Appends turns (the next `codex exec` of a test). */
  script(turns: FakeTurn[]): void;
  /** Throws on any problem or unused turn so far, then starts afresh for the next test. */
  assertDone(): void;
  close(): Promise<void>;
}

/** Starts the fake on 127.0.0.1 with a free port; every request must carry `Authorization: Bearer <apiKey>`. */
export async function startFakeResponsesApi(apiKey: string): Promise<FakeResponsesApi> {
  const queue: FakeTurn[] = [];
  const calls: ResponsesRequestBody[] = [];
  const problems: string[] = [];
  // A 400 ends Codex's turn at once (a 5xx would be retried): the problem is recorded and the run fails visibly.
  const refuse = (res: Parameters<typeof sendJson>[0], why: string) => {
    problems.push(why);
    sendJson(res, 400, { error: { message: `fake-responses-api: ${why}`, type: 'invalid_request_error', code: null } });
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || req.url !== '/v1/responses') {
        refuse(res, `unexpected request ${req.method} ${req.url}`);
        return;
      }
      if (req.headers.authorization !== `Bearer ${apiKey}`) {
        refuse(res, `request without the API key (authorization: ${req.headers.authorization ?? 'none'})`);
        return;
      }
      let body: ResponsesRequestBody;
      try {
        body = JSON.parse(await readBody(req)) as ResponsesRequestBody;
      } catch {
        refuse(res, 'request body is not JSON');
        return;
      }
      const index = calls.length;
      calls.push(body);
      if (body.stream !== true || !Array.isArray(body.input)) {
        refuse(res, `request #${index + 1} is not a streaming Responses request`);
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
      const id = `resp_fake_${index}`;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const event = (data: Record<string, unknown> & { type: string }) =>
        res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
      event({ type: 'response.created', response: { id, object: 'response', status: 'in_progress', output: [] } });
      turn.output.forEach((item, outputIndex) => {
        event({ type: 'response.output_item.added', output_index: outputIndex, item });
        event({ type: 'response.output_item.done', output_index: outputIndex, item });
      });
      event({
        type: 'response.completed',
        response: {
          id,
          object: 'response',
          status: 'completed',
          output: turn.output,
          usage: {
            input_tokens: 500,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: 40,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: 540,
          },
        },
      });
      res.end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    calls,
    problems,
    script(turns) {
      queue.push(...turns);
    },
    assertDone() {
      const all = problems.splice(0);
      if (queue.length > 0) all.push(`${queue.splice(0).length} scripted turn(s) never used`);
      if (all.length > 0) throw new Error(`fake-responses-api: ${all.join('; ')}`);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
