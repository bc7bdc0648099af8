/**
 * Issue 21, finding 3: nothing reaches an MCP upstream unjudged. An attacking agent sends a `tools/call` for a judged
 * tool as a JSON-RPC notification (no id: the proxy used to relay it as it was), a batch, a request with a method no
 * client sends, and an answer to a request the upstream never made. Over both fronts (stdio as an MCP client starts
 * it, and `--http`), the built CLI as a process in front of server-filesystem behind the tap, which logs every message
 * that reaches the upstream; the run's real Temporal server, workers started here.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChain } from '../../src/audit/chain';
import { freePort } from '../../src/devserver/server';
import { newAgentToken, tokenSha256 } from '../../src/gate/http-auth';
import {
  connectProxy,
  mcpSpec,
  proxyArgs,
  readTap,
  startMcpEnv,
  tappedFsUpstream,
  until,
  type ConnectedProxy,
  type McpEnv,
} from '../helpers/mcp';
import { connectHttp, startHttpProxy, type HttpProxy } from '../helpers/mcp-http';
import { logRecordsOf } from '../helpers/logger';

const ENGINEERING = newAgentToken();

interface Front {
  name: string;
  agent: Client;
  stderr: () => string;
  /** A raw message as the agent's transport frames it. */
  send: (m: unknown) => Promise<void>;
  /** A batch: the answers the agent gets for it (the ids it names). */
  sendBatch: (batch: unknown[]) => Promise<Array<Record<string, unknown>>>;
  /** Every message the proxy sent the agent so far. */
  received: Array<Record<string, unknown>>;
  tap: string;
  close: () => Promise<void>;
  /** The front's `--metrics` endpoint, when it serves one. */
  metricsUrl?: string;
}

/** Taps the client's transport: every message the proxy sends is kept before the client handles it. */
function watch(agent: Client): { transport: Transport; received: Array<Record<string, unknown>> } {
  const transport = agent.transport!;
  const received: Array<Record<string, unknown>> = [];
  const handle = transport.onmessage;
  transport.onmessage = (m, extra) => {
    received.push(m);
    // Answers to the raw requests of these tests are the test's, not the client's.
    if (typeof (m as { id?: unknown }).id === 'number' && (m as { id: number }).id >= 900) return;
    handle?.(m, extra);
  };
  return { transport, received };
}

async function stdioFront(env: McpEnv, tap: string): Promise<Front> {
  const p: ConnectedProxy = await connectProxy(env, tappedFsUpstream(env, tap));
  const { transport, received } = watch(p.agent);
  const send = (m: unknown) => transport.send(m as JSONRPCMessage);
  return {
    name: 'stdio',
    agent: p.agent,
    stderr: p.stderr,
    send,
    async sendBatch(batch) {
      await send(batch);
      const ids: unknown[] = batch.map((m) => (m as { id?: unknown }).id).filter((id) => id !== undefined);
      return until('the answers to the batch', () => {
        const answers = received.filter((m) => ids.includes(m.id));
        return answers.length === ids.length ? answers : undefined;
      });
    },
    received,
    tap,
    close: () => p.agent.close(),
  };
}

async function httpFront(env: McpEnv, tap: string): Promise<Front & { proxy: HttpProxy }> {
  // The stdio proxy's flags without --agent (the token decides) and with the tapped upstream after `--`.
  const args = proxyArgs(env, tappedFsUpstream(env, tap)).slice(2);
  args.splice(args.indexOf('--agent'), 2);
  const metrics = `127.0.0.1:${await freePort()}`;
  args.unshift('--metrics', metrics);
  const proxy = await startHttpProxy(args, env.baseDir);
  const agent = await connectHttp(proxy.url, ENGINEERING);
  const { transport, received } = watch(agent);
  const sessionId = (transport as Transport & { sessionId?: string }).sessionId!;
  return {
    name: 'http',
    agent,
    proxy,
    metricsUrl: `http://${metrics}/metrics`,
    stderr: proxy.stderr,
    send: (m) => transport.send(m as JSONRPCMessage),
    async sendBatch(batch) {
      const res = await fetch(proxy.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${ENGINEERING}`,
          'mcp-session-id': sessionId,
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify(batch),
      });
      expect(res.status).toBe(400);
      return (await res.json()) as Array<Record<string, unknown>>;
    },
    received,
    tap,
    async close() {
      await agent.close();
      await proxy.stop();
    },
  };
}

const writeCall = (path: string, id?: number) => ({
  jsonrpc: '2.0',
  ...(id === undefined ? {} : { id }),
  method: 'tools/call',
  params: { name: 'write_file', arguments: { path, content: 'unjudged' } },
});

let env: McpEnv;
beforeAll(async () => {
  env = await startMcpEnv(
    mcpSpec({ http: { agents: [{ agent: '@engineering', tokenSha256: tokenSha256(ENGINEERING) }] } }),
  );
});
afterAll(async () => {
  await env?.sys.stop();
});

const auditLog = () => join(env.baseDir, '.agent-judge/mcp-audit.jsonl');
const dropped = () =>
  readChain<Record<string, unknown>>(auditLog())
    .map((e) => e.record)
    .filter((r) => r.kind === 'mcp_dropped');

describe.each([
  ['stdio', stdioFront],
  ['http', httpFront],
] as const)('over %s, an agent message MCP gives no client is never relayed', (name, open) => {
  let front: Front;
  beforeAll(async () => {
    front = await open(env, join(env.baseDir, `tap-${name}.jsonl`));
  });
  afterAll(async () => {
    await front?.close();
  });

  /** A round trip after the messages under test: by its answer, anything relayed before it has reached the tap. */
  const roundTrip = () => front.agent.listTools();

  it('a tools/call sent as a notification (no id) for a judged tool never reaches the upstream', async () => {
    const path = join(env.workspace, `unjudged-${name}.txt`);
    await front.send(writeCall(path));
    await roundTrip();
    expect(readTap(front.tap).filter((e) => e.event === 'call')).toEqual([]);
    expect(existsSync(path)).toBe(false);
    expect(logRecordsOf(front.stderr())).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'dropped a message from the agent, not relayed',
        agent: '@engineering',
        reason: 'not_a_client_notification',
        detail:
          'agent-judge: dropped the notification "tools/call": not a notification an MCP client sends (a request ' +
          'needs an id, and a tools/call is judged)',
      }),
    );
    expect(dropped()).toContainEqual(
      expect.objectContaining({
        agent: '@engineering',
        server: 'fs',
        reason: 'not_a_client_notification',
        method: 'tools/call',
        answered: false,
      }),
    );
  });

  it('a batch is refused whole: its requests get an Invalid Request error, nothing of it is relayed', async () => {
    const path = join(env.workspace, `batch-${name}.txt`);
    const answers = await front.sendBatch([
      writeCall(path, 901),
      writeCall(path),
      { jsonrpc: '2.0', id: 902, method: 'ping' },
    ]);
    expect(answers.map((a) => [a.id, (a.error as { code: number }).code])).toEqual([
      [901, -32600],
      [902, -32600],
    ]);
    expect((answers[0]!.error as { message: string }).message).toContain('JSON-RPC batches are refused');
    await roundTrip();
    const tapped = readTap(front.tap);
    expect(tapped.filter((e) => e.event === 'call' || e.event === 'batch')).toEqual([]);
    expect(existsSync(path)).toBe(false);
    expect(dropped()).toContainEqual(
      expect.objectContaining({ reason: 'batch', method: 'tools/call,tools/call,ping', answered: true }),
    );
  });

  it('a request with a method no client sends is answered -32601 by the proxy, not relayed', async () => {
    await front.send({ jsonrpc: '2.0', id: 903, method: 'tools/execute', params: { name: 'write_file' } });
    const answer = await until('the answer to 903', () => front.received.find((m) => m.id === 903));
    expect(answer.error).toEqual({
      code: -32601,
      message: 'Method not found: "tools/execute" is not a request an MCP client sends (agent-judge relays only those)',
    });
    await roundTrip();
    expect(readTap(front.tap).filter((e) => e.method === 'tools/execute')).toEqual([]);
    expect(dropped()).toContainEqual(
      expect.objectContaining({ reason: 'unknown_method', method: 'tools/execute', answered: true }),
    );
  });

  it('an answer to a request the upstream never made is dropped', async () => {
    await front.send({ jsonrpc: '2.0', id: 'forged-1', result: { roots: [] } });
    await roundTrip();
    expect(readTap(front.tap).filter((e) => e.id === 'forged-1')).toEqual([]);
    expect(dropped()).toContainEqual(expect.objectContaining({ reason: 'unexpected_response', method: null }));
  });

  it('what MCP gives a client still passes: requests, client notifications', async () => {
    await front.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    const tools = await roundTrip();
    expect(tools.tools.map((t) => t.name)).toContain('write_file');
    expect(readTap(front.tap).map((e) => e.method)).toEqual(
      expect.arrayContaining([
        'initialize',
        'notifications/initialized',
        'tools/list',
        'notifications/roots/list_changed',
      ]),
    );
  });

  it.runIf(name === 'http')('--metrics counts each dropped message by reason', async () => {
    const text = await (await fetch(front.metricsUrl!)).text();
    const count = (reason: string) =>
      Number(
        new RegExp(`^agent_judge_mcp_messages_dropped_total\\{[^}]*reason="${reason}"[^}]*\\} (\\d+)`, 'm').exec(
          text,
        )?.[1],
      );
    // The tests above, in order: one notification, one batch, one unknown method, one forged answer.
    expect(count('not_a_client_notification')).toBe(1);
    expect(count('batch')).toBe(1);
    expect(count('unknown_method')).toBe(1);
    expect(count('unexpected_response')).toBe(1);
    expect(count('malformed')).toBe(0);
    expect(text).toMatch(/^agent_judge_mcp_sessions_refused_total(\{[^}]*\})? 0$/m);
  });
});
