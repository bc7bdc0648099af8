/**
 * A scripted Ollama API on loopback, speaking the real wire protocol so tests drive it with the real
 * `ollama` client: POST /api/chat answered as one JSON object (`stream: false`) or as NDJSON lines
 * ending in `done: true`, errors as non-2xx `{ "error": "..." }`.
 *
 * A scripted fake fails on an unexpected call (a call with no answer left) and on an unused answer:
 * call `assertDone()` at the end of each test.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extractProposalBlock, extractUserTaskBlock, PROPOSAL_OPEN } from '../../src/judge/prompt';
import { readBody, sendJson } from './http';

export interface ChatRequestBody {
  model: string;
  messages: Array<{ role: string; content: string }>;
  stream?: boolean;
  format?: unknown;
  options?: { temperature?: number; seed?: number };
  think?: boolean;
}

/** One scripted answer. */
export type FakeAnswer =
  | { content: string; delayMs?: number; promptTokens?: number; completionTokens?: number }
  | { status: number; error: string; delayMs?: number };

export type Responder = (request: ChatRequestBody, callIndex: number) => FakeAnswer;

export interface FakeOllama {
  /** `http://127.0.0.1:PORT`, what `new Ollama({ host })` takes. */
  host: string;
  /** Every /api/chat body received, in order. */
  calls: ChatRequestBody[];
  /** The request headers of each call, same order as `calls`. */
  headers: Array<Record<string, string | string[] | undefined>>;
  /** Problems seen so far (unexpected calls, bad requests). */
  problems: string[];
  /** Throws when a call was unexpected or a scripted answer was never used. */
  assertDone(): void;
  close(): Promise<void>;
}

export type FakeOllamaMode =
  /** Answers in order; one more call than answers is a failure, so is an answer left over. */
  | { script: FakeAnswer[] }
  /** Answers every call with a function of the request (honest, compromised, slow...). */
  | { respond: Responder };

function finalFields(model: string, a: { promptTokens?: number; completionTokens?: number }) {
  return {
    model,
    created_at: new Date().toISOString(),
    done: true,
    done_reason: 'stop',
    total_duration: 1_200_000,
    load_duration: 100_000,
    prompt_eval_count: a.promptTokens ?? 321,
    prompt_eval_duration: 400_000,
    eval_count: a.completionTokens ?? 42,
    eval_duration: 700_000,
  };
}

/** Starts the fake on 127.0.0.1 with a free port. */
export async function startFakeOllama(mode: FakeOllamaMode): Promise<FakeOllama> {
  const calls: ChatRequestBody[] = [];
  const headers: Array<Record<string, string | string[] | undefined>> = [];
  const problems: string[] = [];
  const script = 'script' in mode ? [...mode.script] : null;
  const pending = new Set<NodeJS.Timeout>();

  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || req.url !== '/api/chat') {
        problems.push(`unexpected request ${req.method} ${req.url}`);
        sendJson(res, 404, { error: `404 page not found` });
        return;
      }
      let body: ChatRequestBody;
      try {
        body = JSON.parse(await readBody(req)) as ChatRequestBody;
      } catch {
        problems.push('request body is not JSON');
        sendJson(res, 400, { error: 'invalid JSON body' });
        return;
      }
      if (typeof body.model !== 'string' || !Array.isArray(body.messages)) {
        problems.push('request without model or messages');
        sendJson(res, 400, { error: 'model and messages are required' });
        return;
      }
      const index = calls.length;
      calls.push(body);
      headers.push({ ...req.headers });
      let answer: FakeAnswer;
      if (script) {
        const next = script.shift();
        if (!next) {
          problems.push(`unexpected call #${index + 1}: no scripted answer left`);
          sendJson(res, 500, { error: 'fake-ollama: unexpected call' });
          return;
        }
        answer = next;
      } else {
        answer = (mode as { respond: Responder }).respond(body, index);
      }
      const reply = () => {
        if (res.destroyed) return;
        if ('error' in answer) {
          sendJson(res, answer.status, { error: answer.error });
          return;
        }
        if (body.stream) {
          res.writeHead(200, { 'content-type': 'application/x-ndjson' });
          const pieces = answer.content.match(/[\s\S]{1,16}/g) ?? [''];
          for (const piece of pieces) {
            res.write(
              `${JSON.stringify({
                model: body.model,
                created_at: new Date().toISOString(),
                message: { role: 'assistant', content: piece },
                done: false,
              })}\n`,
            );
          }
          res.end(
            `${JSON.stringify({ ...finalFields(body.model, answer), message: { role: 'assistant', content: '' } })}\n`,
          );
          return;
        }
        sendJson(res, 200, {
          ...finalFields(body.model, answer),
          message: { role: 'assistant', content: answer.content },
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
    host: `http://127.0.0.1:${port}`,
    calls,
    headers,
    problems,
    assertDone() {
      const all = [...problems];
      if (script && script.length > 0) all.push(`${script.length} scripted answer(s) never used`);
      if (all.length > 0) throw new Error(`fake-ollama: ${all.join('; ')}`);
    },
    async close() {
      for (const t of pending) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A verdict answer as the model would send it. */
export function answerJson(
  verdict: 'APPROVE' | 'REJECT' | 'CLARIFY',
  confidence: number,
  reason = `fake judge says ${verdict}`,
  extra: object = {},
): string {
  return JSON.stringify({ verdict, confidence, reason, ...extra });
}

/** The compromised model: APPROVE with confidence 0.99 whatever it is asked, claiming the action serves the task. */
export const compromisedModel: Responder = () => ({
  content: answerJson('APPROVE', 0.99, 'Looks fine to me. Approved.', { task_alignment: 'serves_task' }),
});

/** A model that answers after `ms` (for the timeout path). */
export const slowModel =
  (ms: number): Responder =>
  () => ({ content: answerJson('APPROVE', 0.9), delayMs: ms });

/** A model that always answers something that is not a verdict. */
export const garbageModel: Responder = () => ({ content: 'Sure! I think this proposal is APPROVED :)' });

/** A URL on loopback where nothing listens (the unreachable model). */
export async function closedPortHost(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/**
 * The honest model: reads the proposal out of the delimited block (as a real model would have to)
 * and answers what `oracle` says for its proposal_id, with confidence 0.9. A prompt whose block
 * cannot be parsed back gets a REJECT, so a broken escaping shows up in the results.
 */
export function honestModel(oracle: (proposalId: string) => 'APPROVE' | 'REJECT' | 'CLARIFY' | undefined): Responder {
  return (request) => {
    const user = request.messages.find((m) => m.role === 'user' && m.content.includes(PROPOSAL_OPEN));
    const proposal = user ? (extractProposalBlock(user.content) as { proposal_id?: unknown } | null) : null;
    const id = typeof proposal?.proposal_id === 'string' ? proposal.proposal_id : undefined;
    const verdict = id ? oracle(id) : undefined;
    if (!verdict) return { content: answerJson('REJECT', 0.9, 'could not read the proposal block') };
    // With the user's task in the prompt, an honest judge says whether the action serves it.
    const task = user ? extractUserTaskBlock(user.content) : null;
    const task_alignment = task === null ? 'no_task' : verdict === 'APPROVE' ? 'serves_task' : 'other_goal';
    return { content: answerJson(verdict, 0.9, `honest judge: ${verdict} for ${id}`, { task_alignment }) };
  };
}
