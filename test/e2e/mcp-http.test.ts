/**
 * Issue 10, the proxy's HTTP transports: `agent-judge mcp --http` (Streamable HTTP to agents, per-agent bearer
 * tokens hashed in the policy, Host/Origin checks) and `--upstream-url` (a Streamable HTTP upstream). The real SDK
 * client over Streamable HTTP → the built CLI as a process → real upstreams from npm (server-filesystem over stdio,
 * server-everything in its Streamable HTTP mode), the run's real Temporal server, workers started here. Side effects
 * are checked on disk.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decide, getStatus } from '../../src/client/proposals';
import { VERDICT_META_KEY } from '../../src/contracts/mcp';
import { newAgentToken, tokenSha256 } from '../../src/gate/http-auth';
import { testPolicy, type TestSystem } from '../helpers/system';
import { EVIDENCE, mcpSpec, scott, startMcpEnv, until } from '../helpers/mcp';
import {
  BIN,
  EVERYTHING_SERVER,
  FS_SERVER,
  ROOT,
  childrenOf,
  connectHttp,
  startEverythingHttp,
  startHttpProxy,
  type HttpProxy,
  type RunningProcess,
} from '../helpers/mcp-http';
import { logRecordsOf } from '../helpers/logger';

const ENGINEERING = newAgentToken();
const RESEARCH = newAgentToken();

/** The stdio tests' policy, with a shorter hold, two no-judge tools of server-everything and the agents' tokens. */
function spec(): Record<string, unknown> {
  return mcpSpec({
    holdFor: '3s',
    mkdirActionType: 'workspace_mkdir',
    rules: [
      { name: 'everything.echo', tool: 'echo', tier: 'no-judge' },
      { name: 'everything.trigger', tool: 'trigger-*', tier: 'no-judge' },
    ],
    http: {
      agents: [
        { agent: '@engineering', tokenSha256: tokenSha256(ENGINEERING) },
        { agent: '@research', tokenSha256: tokenSha256(RESEARCH) },
      ],
    },
  });
}

interface Env {
  sys: TestSystem;
  policyFile: string;
  workspace: string;
}

async function startEnv(): Promise<Env> {
  return startMcpEnv(spec());
}

function commonArgs(env: Env): string[] {
  return [
    '--policy',
    env.policyFile,
    '--address',
    inject('temporalAddress'),
    '--namespace',
    inject('temporalNamespace'),
    '--task-queue-prefix',
    env.sys.taskQueues.workflow,
    '--state-dir',
    join(env.sys.baseDir, '.agent-judge'),
  ];
}

interface CallResult {
  isError?: boolean;
  content?: Array<{ type: string; text?: string }>;
  _meta?: Record<string, unknown>;
}
const call = (c: Client, name: string, args: Record<string, unknown>) =>
  c.callTool({ name, arguments: args }) as Promise<CallResult>;
const verdictOf = (r: CallResult) => r._meta?.[VERDICT_META_KEY] as Record<string, unknown> | undefined;
const textOf = (r: CallResult) => (r.content ?? []).map((c) => c.text ?? '').join('\n');

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** One raw POST to the endpoint, as a browser page or a stray client would send it. */
function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

/** A raw HTTP request with a Host header of our choosing (fetch does not let a caller set Host). */
function rawRequest(
  url: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    void import('node:http').then(({ request }) => {
      const req = request(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname,
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  });
}

/** The workflow id of the proposal awaiting a person that writes `path` (visibility lags: a few tries). */
async function runningProposalFor(env: Env, path: string): Promise<string> {
  for (let i = 0; i < 40; i++) {
    const list = env.sys.client.workflow.list({
      query:
        `WorkflowType = 'proposalWorkflow' AND ExecutionStatus = 'Running' ` +
        `AND TaskQueue = '${env.sys.taskQueues.workflow}'`,
    });
    for await (const wf of list) {
      const st = await getStatus(env.sys.client, wf.workflowId).catch(() => null);
      if (st?.proposal.target.path === path && st.status === 'awaiting_human') return wf.workflowId;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no proposal awaiting a person writes ${path}`);
}

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end();
  });
}

describe('agent-judge mcp --http in front of server-filesystem (stdio upstream, one per session)', () => {
  let env: Env;
  let proxy: HttpProxy;
  let engineering: Client;
  beforeAll(async () => {
    env = await startEnv();
    proxy = await startHttpProxy(
      [...commonArgs(env), '--', process.execPath, FS_SERVER, env.sys.baseDir],
      env.sys.baseDir,
    );
    engineering = await connectHttp(proxy.url, ENGINEERING);
  });
  afterAll(async () => {
    await engineering?.close();
    const code = await proxy?.stop();
    expect(code).toBe(0); // SIGTERM: the front closes its sessions and exits cleanly
    await env?.sys.stop();
  });

  it('no token or a wrong token: 401 with WWW-Authenticate: Bearer, and nothing is forwarded', async () => {
    const path = join(env.workspace, 'unauthorized.txt');
    const write = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'write_file', arguments: { path, content: 'x' } },
    };
    const opened = () => logRecordsOf(proxy.stderr()).filter((r) => r.msg === 'session opened');
    const sessionsBefore = opened().length;
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: `Bearer ${newAgentToken()}` },
      { authorization: 'Basic eDp5' },
    ];
    for (const headers of attempts) {
      for (const body of [INITIALIZE, write]) {
        const r = await post(proxy.url, body, headers);
        expect(r.status).toBe(401);
        expect(r.headers.get('www-authenticate')).toMatch(/^Bearer realm="agent-judge"/);
      }
    }
    const wrong = await post(proxy.url, INITIALIZE, { authorization: `Bearer ${newAgentToken()}` });
    expect(wrong.headers.get('www-authenticate')).toContain('error="invalid_token"');
    await expect(connectHttp(proxy.url)).rejects.toThrow(/401|Unauthorized/);
    expect(existsSync(path)).toBe(false);
    // No session, so no upstream connection, was ever created for them.
    expect(opened()).toHaveLength(sessionsBefore);
  });

  it('a Host or Origin that is not this server: 403 (DNS rebinding), even with a valid token', async () => {
    const auth = { authorization: `Bearer ${ENGINEERING}` };
    const port = new URL(proxy.url).port;
    const badHost = await rawRequest(proxy.url, { ...auth, host: `evil.example:${port}` }, INITIALIZE);
    expect(badHost.status).toBe(403);
    expect(badHost.text).toContain('Host header');
    const badOrigin = await post(proxy.url, INITIALIZE, { ...auth, origin: 'http://evil.example' });
    expect(badOrigin.status).toBe(403);
    expect(await badOrigin.text()).toContain('Origin');
    // The loopback origin of this very port is fine (a local web client).
    const local = await post(proxy.url, INITIALIZE, { ...auth, origin: `http://localhost:${port}` });
    expect(local.status).toBe(200);
    const sid = local.headers.get('mcp-session-id');
    expect(sid).toBeTruthy();
    await local.body?.cancel();
    // That session belongs to @engineering: @research's valid token does not reach it.
    const foreign = await post(
      proxy.url,
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      {
        authorization: `Bearer ${RESEARCH}`,
        'mcp-session-id': sid!,
        'mcp-protocol-version': '2025-11-25',
      },
    );
    expect(foreign.status).toBe(404);
    const del = await fetch(proxy.url, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': sid! } });
    expect(del.status).toBe(200);
  });

  it('a body over 4 MiB gets 413, a body that is not JSON a parse error', async () => {
    const auth = { authorization: `Bearer ${ENGINEERING}` };
    const big = await post(proxy.url, { ...INITIALIZE, padding: 'x'.repeat(5 * 1024 * 1024) }, auth);
    expect(big.status).toBe(413);
    const bad = await fetch(proxy.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth },
      body: '{"jsonrpc": "2.0", ',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: -32700 } });
  });

  it('two agents, each with its own token, get their own agent ids on their proposals', async () => {
    const research = await connectHttp(proxy.url, RESEARCH, 'research-agent');
    try {
      const ids: Record<string, string> = {};
      for (const [agent, client] of [
        ['@engineering', engineering],
        ['@research', research],
      ] as const) {
        const r = await call(client, 'write_file', {
          path: join(env.workspace, `${agent.slice(1)}.md`),
          content: `# ${agent}\n`,
          _agent_judge: { justification: 'the weekly report', cited_evidence: EVIDENCE },
        });
        expect(verdictOf(r)).toMatchObject({ outcome: 'PENDING', status: 'awaiting_human' });
        ids[agent] = String(verdictOf(r)!.proposal_id);
      }
      expect((await getStatus(env.sys.client, ids['@engineering']!)).proposal.agent_id).toBe('@engineering');
      expect((await getStatus(env.sys.client, ids['@research']!)).proposal.agent_id).toBe('@research');
      expect(existsSync(join(env.workspace, 'engineering.md'))).toBe(false);
      expect(existsSync(join(env.workspace, 'research.md'))).toBe(false);
    } finally {
      await research.close();
    }
  });

  it('a denied write_file leaves the directory unchanged', async () => {
    const outside = join(env.sys.baseDir, 'outside.txt');
    const r = await call(engineering, 'write_file', { path: outside, content: 'x' });
    expect(r.isError).toBe(true);
    expect(verdictOf(r)).toMatchObject({ outcome: 'REJECT', rule: 'files.roots' });
    expect(existsSync(outside)).toBe(false);
  });

  it('approved call forwarded once: held, signed decide, re-call writes; the next is a new proposal', async () => {
    const path = join(env.workspace, 'report.md');
    const args = { path, content: '# report\n' };
    const first = await call(engineering, 'write_file', {
      ...args,
      _agent_judge: { justification: 'the weekly report', cited_evidence: EVIDENCE },
    });
    const meta = verdictOf(first)!;
    expect(meta).toMatchObject({ outcome: 'PENDING' });
    expect(textOf(first)).toMatch(/^pending: not performed; call again later/);
    await decide(
      env.sys.client,
      String(meta.proposal_id),
      { decision: 'approve', approver: 'scott', reason: 'fine', via: 'cli' },
      { key: scott },
    );
    const again = await call(engineering, 'write_file', args);
    expect(again.isError).toBeFalsy();
    expect(readFileSync(path, 'utf8')).toBe('# report\n');
    // The outcome is reported right after the agent has its answer: wait for it.
    const reported = await until('the outcome recorded', async () => {
      const s = await getStatus(env.sys.client, String(meta.proposal_id));
      return s.caller?.outcome ? s : undefined;
    });
    expect(reported).toMatchObject({ status: 'executed', caller: { outcome: 'ok' } });
    const mtime = statSync(path).mtimeMs;
    const third = await call(engineering, 'write_file', {
      ...args,
      _agent_judge: { justification: 'again', cited_evidence: EVIDENCE },
    });
    expect(verdictOf(third)).toMatchObject({ outcome: 'PENDING' });
    expect(verdictOf(third)!.proposal_id).not.toBe(meta.proposal_id);
    expect(statSync(path).mtimeMs).toBe(mtime);
  });

  it('each session has its own upstream process, ended with the session', async () => {
    const before = await childrenOf(proxy.child.pid!);
    const transport = new StreamableHTTPClientTransport(new URL(proxy.url), {
      requestInit: { headers: { authorization: `Bearer ${RESEARCH}` } },
    });
    const client = new Client({ name: 'short-lived', version: '1' });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('write_file');
    const during = await childrenOf(proxy.child.pid!);
    expect(during.length).toBe(before.length + 1);
    await transport.terminateSession(); // DELETE: the session ends, its upstream with it
    await client.close();
    for (let i = 0; i < 50 && (await childrenOf(proxy.child.pid!)).length > before.length; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await childrenOf(proxy.child.pid!)).sort()).toEqual(before.sort());
  });

  it('a client that drops its connection while held: never forwarded, even if approved at once', async () => {
    // A long hold, so the approval below lands while the proxy still holds the call.
    const longHold = join(env.sys.baseDir, 'long-hold.json');
    writeFileSync(
      longHold,
      JSON.stringify({
        ...env.sys.policy,
        spec: { ...env.sys.policy.spec, mcp: { ...env.sys.policy.spec.mcp, holdFor: '60s' } },
      }),
    );
    const args = commonArgs(env).map((a) => (a === env.policyFile ? longHold : a));
    const held = await startHttpProxy([...args, '--', process.execPath, FS_SERVER, env.sys.baseDir], env.sys.baseDir);
    const path = join(env.workspace, 'dropped.txt');
    try {
      const auth = { authorization: `Bearer ${ENGINEERING}` };
      const init = await post(held.url, INITIALIZE, auth);
      const sid = init.headers.get('mcp-session-id')!;
      await init.text();
      const session = { ...auth, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
      await (await post(held.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).text();
      const controller = new AbortController();
      const pending = fetch(held.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...session },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: {
            name: 'write_file',
            arguments: { path, content: 'no', _agent_judge: { justification: 'a file', cited_evidence: EVIDENCE } },
          },
        }),
        signal: controller.signal,
      }).then((r) => r.text());
      const id = await runningProposalFor(env, path);
      controller.abort(); // no notifications/cancelled: the connection just goes away
      await expect(pending).rejects.toThrow();
      await new Promise((r) => setTimeout(r, 500));
      await decide(env.sys.client, id, { decision: 'approve', approver: 'scott', via: 'cli' }, { key: scott });
      await new Promise((r) => setTimeout(r, 2000));
      expect(existsSync(path)).toBe(false);
      expect((await getStatus(env.sys.client, id)).caller?.forwarded_at ?? null).toBeNull();
    } finally {
      expect(await held.stop()).toBe(0);
    }
  });

  it('a session idle for spec.mcp.http.sessionIdle is closed with its upstream process', async () => {
    const shortIdle = join(env.sys.baseDir, 'short-idle.json');
    const { mcp } = env.sys.policy.spec;
    writeFileSync(
      shortIdle,
      JSON.stringify({
        ...env.sys.policy,
        spec: { ...env.sys.policy.spec, mcp: { ...mcp, http: { ...mcp.http, sessionIdle: '2s' } } },
      }),
    );
    const args = commonArgs(env).map((a) => (a === env.policyFile ? shortIdle : a));
    const idle = await startHttpProxy([...args, '--', process.execPath, FS_SERVER, env.sys.baseDir], env.sys.baseDir);
    try {
      const auth = { authorization: `Bearer ${ENGINEERING}` };
      const init = await post(idle.url, INITIALIZE, auth);
      const sid = init.headers.get('mcp-session-id')!;
      await init.text();
      expect(await childrenOf(idle.child.pid!)).toHaveLength(1);
      for (let i = 0; i < 100 && (await childrenOf(idle.child.pid!)).length > 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(await childrenOf(idle.child.pid!)).toEqual([]);
      expect(logRecordsOf(idle.stderr())).toContainEqual(
        expect.objectContaining({ level: 'info', msg: 'session closed', session: sid, why: 'idle' }),
      );
      const late = await post(
        idle.url,
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        {
          ...auth,
          'mcp-session-id': sid,
          'mcp-protocol-version': '2025-11-25',
        },
      );
      expect(late.status).toBe(404);
    } finally {
      expect(await idle.stop()).toBe(0);
    }
  });

  it('--agent with --http serves that agent only: another valid token gets 403', async () => {
    const only = await startHttpProxy(
      [...commonArgs(env), '--agent', '@research', '--', process.execPath, FS_SERVER, env.sys.baseDir],
      env.sys.baseDir,
    );
    try {
      const refused = await post(only.url, INITIALIZE, { authorization: `Bearer ${ENGINEERING}` });
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain('serves @research only');
      const ok = await connectHttp(only.url, RESEARCH);
      await ok.close();
    } finally {
      expect(await only.stop()).toBe(0);
    }
  });
});

describe('--upstream-url: a Streamable HTTP upstream (server-everything)', () => {
  let env: Env;
  let everything: RunningProcess & { url: string };
  beforeAll(async () => {
    env = await startEnv();
    everything = await startEverythingHttp();
  });
  afterAll(async () => {
    await everything?.stop();
    await env?.sys.stop();
  });

  async function sameAsDirect(proxied: Client): Promise<void> {
    const direct = await connectHttp(everything.url);
    try {
      expect(proxied.getServerVersion()).toEqual(direct.getServerVersion());
      expect(proxied.getServerCapabilities()).toEqual(direct.getServerCapabilities());
      const tools = await proxied.listTools();
      const upstreamTools = await direct.listTools();
      expect(tools.tools.map((t) => t.name)).toEqual(upstreamTools.tools.map((t) => t.name));
      for (const [i, tool] of tools.tools.entries()) {
        const { _agent_judge: added, ...rest } = tool.inputSchema.properties as Record<string, unknown>;
        expect(added).toMatchObject({ type: 'object' });
        expect(rest).toEqual(upstreamTools.tools[i]!.inputSchema.properties ?? {});
      }
      const resources = await proxied.listResources();
      expect(resources.resources.length).toBeGreaterThan(0);
      expect(resources).toEqual(await direct.listResources());
      const uri = resources.resources[0]!.uri;
      expect(await proxied.readResource({ uri })).toEqual(await direct.readResource({ uri }));
      expect(await proxied.listResourceTemplates()).toEqual(await direct.listResourceTemplates());
      const prompts = await proxied.listPrompts();
      expect(prompts).toEqual(await direct.listPrompts());
      const simple = prompts.prompts.find((p) => !(p.arguments ?? []).some((a) => a.required));
      expect(await proxied.getPrompt({ name: simple!.name })).toEqual(await direct.getPrompt({ name: simple!.name }));
      // A no-judge tool call is relayed and answered by the upstream.
      const echo = await call(proxied, 'echo', { message: 'through the proxy' });
      expect(textOf(echo)).toContain('through the proxy');
      // An unmapped tool is judged (human-only): held, then pending, never performed by the upstream.
      const held = await call(proxied, 'get-sum', { a: 1, b: 2 });
      expect(verdictOf(held)).toMatchObject({ outcome: 'PENDING' });
      // get-sum never ran: what it answers directly is not in the pending answer.
      expect(textOf(await call(direct, 'get-sum', { a: 1, b: 2 }))).toMatch(/sum of 1 and 2/i);
      expect(textOf(held)).not.toMatch(/sum of/i);
    } finally {
      await direct.close();
    }
  }

  it('stdio front, HTTP upstream: tools, resources and prompts relayed unchanged', async () => {
    const proxied = new Client({ name: 'test-agent', version: '1' });
    await proxied.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', '--agent', '@engineering', ...commonArgs(env), '--upstream-url', everything.url],
        cwd: env.sys.baseDir,
        stderr: 'pipe',
      }),
    );
    try {
      await sameAsDirect(proxied);
    } finally {
      await proxied.close();
    }
  });

  it("HTTP front, HTTP upstream: the upstream's progress and its sampling request reach the agent", async () => {
    const proxy = await startHttpProxy([...commonArgs(env), '--upstream-url', everything.url], env.sys.baseDir);
    try {
      const agent = new Client({ name: 'sampling-agent', version: '1' }, { capabilities: { sampling: {} } });
      const asked: string[] = [];
      agent.setRequestHandler(CreateMessageRequestSchema, (req) => {
        const content = req.params.messages[0]?.content as { text?: string } | undefined;
        asked.push(content?.text ?? '');
        return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'sampled by the agent' } };
      });
      await agent.connect(
        new StreamableHTTPClientTransport(new URL(proxy.url), {
          requestInit: { headers: { authorization: `Bearer ${ENGINEERING}` } },
        }),
      );
      const sampled = (await agent.callTool({
        name: 'trigger-sampling-request',
        arguments: { prompt: 'say hi', maxTokens: 5 },
      })) as CallResult;
      expect(asked).toEqual(['Resource trigger-sampling-request context: say hi']);
      expect(textOf(sampled)).toContain('sampled by the agent');
      const progress: number[] = [];
      const long = (await agent.callTool(
        { name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } },
        undefined,
        { onprogress: (p) => progress.push(p.progress) },
      )) as CallResult;
      expect(textOf(long)).toContain('Long running operation completed');
      expect(progress).toEqual([1, 2, 3]);
      await agent.close();
    } finally {
      expect(await proxy.stop()).toBe(0);
    }
  });

  it('HTTP front, HTTP upstream: the same, and mcp check lists the upstream tools by URL', async () => {
    const proxy = await startHttpProxy([...commonArgs(env), '--upstream-url', everything.url], env.sys.baseDir);
    try {
      const proxied = await connectHttp(proxy.url, ENGINEERING);
      await sameAsDirect(proxied);
      await proxied.close();
    } finally {
      expect(await proxy.stop()).toBe(0);
    }
    const out = await runCli([BIN, 'mcp', 'check', '--policy', env.policyFile, '--upstream-url', everything.url]);
    expect(out.code).toBe(0);
    const report = JSON.parse(out.stdout) as { tools: Array<Record<string, unknown>>; unmapped: string[] };
    expect(report.tools).toContainEqual(expect.objectContaining({ tool: 'echo', rule: 'everything.echo' }));
    expect(report.unmapped).toContain('get-sum');
  });
});

describe('agent-judge mcp --http / --upstream-url refuse to start (fails closed)', () => {
  let dir: string;
  let policyFile: string;
  beforeAll(() => {
    dir = join(ROOT, 'node_modules/.cache', `mcp-http-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    policyFile = join(dir, 'policy.json');
    writeFileSync(policyFile, JSON.stringify(testPolicy(dir, spec())));
  });

  const upstream = ['--', process.execPath, EVERYTHING_SERVER, 'stdio'];

  it('bad flags or policy: exit 2, one line naming the flag or field', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--http', '0.0.0.0:0', '--policy', policyFile, ...upstream], /--http: 0\.0\.0\.0 is not a loopback address/],
      [['--http', 'nonsense', '--policy', policyFile, ...upstream], /--http: expected HOST:PORT/],
      [['--http', '127.0.0.1:0', '--agent', '@nobody', '--policy', policyFile, ...upstream], /--agent: @nobody/],
      [
        ['--agent', '@a', '--policy', policyFile, '--upstream-url', 'http://127.0.0.1:1/mcp', ...upstream],
        /--upstream-url: give either --upstream-url or an upstream command/,
      ],
      [['--agent', '@a', '--policy', policyFile, '--upstream-url', 'ftp://x/mcp'], /--upstream-url: expected an http/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli([BIN, 'mcp', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    }
    const noAgents = join(dir, 'no-agents.json');
    writeFileSync(noAgents, JSON.stringify(testPolicy(dir)));
    const r = await runCli([BIN, 'mcp', '--http', '127.0.0.1:0', '--policy', noAgents, ...upstream]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('spec.mcp.http.agents: --http needs at least one agent token');
    const bad = join(dir, 'bad-digest.json');
    const p = testPolicy(dir, spec());
    writeFileSync(
      bad,
      JSON.stringify({
        ...p,
        spec: { ...p.spec, mcp: { ...p.spec.mcp, http: { agents: [{ agent: '@a', tokenSha256: ENGINEERING }] } } },
      }),
    );
    const digest = await runCli([BIN, 'mcp', '--http', '127.0.0.1:0', '--policy', bad, ...upstream]);
    expect(digest.code).toBe(2);
    expect(digest.stderr).toMatch(/spec\.mcp\.http\.agents\.0\.tokenSha256: expected the SHA-256 of the token/);
  });

  it('an upstream tool that already has _agent_judge: exit 2 naming the tool, never listening', async () => {
    const clash = [
      "import { Server } from '@modelcontextprotocol/sdk/server/index.js';",
      "import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';",
      "import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';",
      "const s = new Server({ name: 'clash', version: '1' }, { capabilities: { tools: {} } });",
      's.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: "mine", inputSchema: ' +
        '{ type: "object", properties: { _agent_judge: { type: "string" } } } }] }));',
      'await s.connect(new StdioServerTransport());',
    ].join('\n');
    const clashFile = join(dir, 'clash.mjs');
    writeFileSync(clashFile, clash);
    const r = await runCli([
      BIN,
      'mcp',
      '--http',
      '127.0.0.1:0',
      '--policy',
      policyFile,
      '--address',
      inject('temporalAddress'),
      '--namespace',
      inject('temporalNamespace'),
      '--',
      process.execPath,
      clashFile,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('tool "mine": its inputSchema already has a property _agent_judge');
    expect(r.stderr).not.toContain('listening');
  });

  it('Temporal unreachable: exit 1 with one line, never listening', async () => {
    const r = await runCli([
      BIN,
      'mcp',
      '--http',
      '127.0.0.1:0',
      '--policy',
      policyFile,
      '--address',
      '127.0.0.1:1',
      ...upstream,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('cannot reach Temporal at 127.0.0.1:1');
    expect(r.stderr).not.toContain('listening');
  });

  it('an unreachable --upstream-url: exit 1 with one line, nothing served', async () => {
    for (const front of [
      ['--agent', '@engineering'],
      ['--http', '127.0.0.1:0'],
    ]) {
      const r = await runCli([
        BIN,
        'mcp',
        ...front,
        '--policy',
        policyFile,
        '--address',
        inject('temporalAddress'),
        '--namespace',
        inject('temporalNamespace'),
        '--upstream-url',
        'http://127.0.0.1:1/mcp',
      ]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain('cannot reach the upstream MCP server http://127.0.0.1:1/mcp');
      expect(r.stderr).not.toContain('listening');
    }
  });
});
