/**
 * Issue 21, finding 4: one agent cannot take every MCP HTTP session (each holds an upstream process). Beyond
 * `spec.limits.httpSessionsPerAgent` that agent's `initialize` gets HTTP 429 naming the limit and when it resets;
 * another agent still initializes. The built CLI as a process (`agent-judge mcp --http`) in front of
 * server-filesystem, the run's real Temporal server, workers started here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAgentToken, tokenSha256 } from '../../src/gate/http-auth';
import { FS_SERVER, mcpSpec, proxyArgs, startMcpEnv, until, type McpEnv } from '../helpers/mcp';
import { testPolicy } from '../helpers/system';
import { childrenOf, connectHttp, startHttpProxy, type HttpProxy } from '../helpers/mcp-http';
import { logRecordsOf } from '../helpers/logger';

const ENGINEERING = newAgentToken();
const RESEARCH = newAgentToken();
const LIMIT = 2;

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

const headers = (token: string, session?: string): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  authorization: `Bearer ${token}`,
  ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}),
});

const initialize = (url: string, token: string) =>
  fetch(url, { method: 'POST', headers: headers(token), body: JSON.stringify(INITIALIZE) });

let env: McpEnv;
let proxy: HttpProxy;
beforeAll(async () => {
  env = await startMcpEnv({
    ...mcpSpec({
      http: {
        agents: [
          { agent: '@engineering', tokenSha256: tokenSha256(ENGINEERING) },
          { agent: '@research', tokenSha256: tokenSha256(RESEARCH) },
        ],
        sessionIdle: '10m',
      },
    }),
    limits: { httpSessionsPerAgent: LIMIT },
  });
  const args = proxyArgs(env, []).slice(2, -1); // no `--` yet
  args.splice(args.indexOf('--agent'), 2);
  proxy = await startHttpProxy([...args, '--', process.execPath, FS_SERVER, env.baseDir], env.baseDir);
});
afterAll(async () => {
  await proxy?.stop();
  await env?.sys.stop();
});

describe('spec.limits.httpSessionsPerAgent', () => {
  it('an agent at its limit gets 429 naming the limit and its reset; another agent still initializes', async () => {
    const sessions: string[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = await initialize(proxy.url, ENGINEERING);
      expect(res.status).toBe(200);
      sessions.push(res.headers.get('mcp-session-id')!);
      await res.body?.cancel();
    }

    const before = Date.now();
    const refused = await initialize(proxy.url, ENGINEERING);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    // The oldest session idles out 10 minutes after its last use, found by the next sweep (at most a minute later).
    expect(retryAfter).toBeGreaterThan(9 * 60);
    expect(retryAfter).toBeLessThanOrEqual(11 * 60 + 1);
    const body = (await refused.json()) as {
      id: number;
      error: { code: number; message: string; data: { limit: string; value: number; resetsAt: string } };
    };
    expect(body.id).toBe(1);
    expect(body.error.message).toBe(
      'Too Many Requests: @engineering has 2 MCP sessions open, the limit spec.limits.httpSessionsPerAgent (2); ' +
        'a session frees when its client ends it (DELETE) or when it idles out (spec.mcp.http.sessionIdle 10m): ' +
        `the next by ${body.error.data.resetsAt} if it stays unused`,
    );
    expect(body.error.data.limit).toBe('spec.limits.httpSessionsPerAgent');
    expect(body.error.data.value).toBe(2);
    const resetsAt = Date.parse(body.error.data.resetsAt);
    expect(resetsAt - before).toBeGreaterThan(9 * 60_000);
    // No upstream was started for the refused session: one child per open session (the probe's has exited).
    expect((await childrenOf(proxy.child.pid!)).length).toBe(LIMIT);
    // The refusal is logged before the 429 is sent, but its stderr may reach this process after the answer.
    await until('the refusal log line', () =>
      logRecordsOf(proxy.stderr()).find((r) => r.msg === 'refused a session: the limit is reached'),
    );
    expect(logRecordsOf(proxy.stderr())).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'refused a session: the limit is reached',
        agent: '@engineering',
        limit: 'spec.limits.httpSessionsPerAgent',
        value: 2,
      }),
    );

    // Another agent is not disturbed.
    const research = await connectHttp(proxy.url, RESEARCH);
    expect((await research.listTools()).tools.map((t) => t.name)).toContain('read_text_file');
    await research.close();

    // One session ended by its client: the agent may open one again.
    const deleted = await fetch(proxy.url, { method: 'DELETE', headers: headers(ENGINEERING, sessions[0]) });
    expect(deleted.status).toBe(200);
    const again = await initialize(proxy.url, ENGINEERING);
    expect(again.status).toBe(200);
    await again.body?.cancel();
  });
});

it('the default policy (policies/default.yaml) allows 8 sessions per agent', () => {
  expect(testPolicy('/tmp').spec.limits.httpSessionsPerAgent).toBe(8);
});
