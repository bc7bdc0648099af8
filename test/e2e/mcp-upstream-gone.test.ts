/**
 * A Streamable HTTP upstream (`--upstream-url`) that goes away while the proxy runs: killed, or restarted so that it
 * answers 404 to the proxy's session. The stdio front ends as it does when a stdio upstream exits (exit 1, one line
 * naming the URL and why); the `--http` front ends only that agent's session. Whatever the agent still waits for gets
 * an error, never silence. The real SDK client → the CLI as a process → real upstreams from npm (server-everything,
 * the SDK's example server), killed and restarted for real; the run's real Temporal server, workers started here.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, getStatus } from '../../src/client/proposals';
import { newAgentToken, tokenSha256 } from '../../src/gate/http-auth';
import {
  callTool,
  EVERYTHING_SERVER,
  mcpSpec,
  proxyArgs,
  proxyArgsForUrl,
  scott,
  spawnProxy,
  startMcpEnv,
  textOf,
  until,
  verdictOf,
  type CallResult,
  type McpEnv,
} from '../helpers/mcp';
import {
  connectHttp,
  startEverythingHttp,
  startHttpProxy,
  startSdkExampleHttp,
  type RunningProcess,
} from '../helpers/mcp-http';
import { logRecordsOf } from '../helpers/logger';

const ENGINEERING = newAgentToken();

let env: McpEnv;
beforeAll(async () => {
  env = await startMcpEnv(
    mcpSpec({
      holdFor: '3s',
      rules: [
        { name: 'everything.echo', tool: 'echo', tier: 'no-judge' },
        { name: 'everything.trigger', tool: 'trigger-*', tier: 'no-judge' },
        { name: 'example.greet', tool: 'greet', tier: 'no-judge' },
      ],
      http: { agents: [{ agent: '@engineering', tokenSha256: tokenSha256(ENGINEERING) }] },
    }),
  );
});
afterAll(async () => {
  await env?.sys.stop();
});

/** What the agent is told when a call fails: the error result's text, or the rejection's message. */
async function failureOf(call: Promise<CallResult>): Promise<string> {
  try {
    const r = await call;
    if (!r.isError) throw new Error(`the call succeeded: ${textOf(r)}`);
    return textOf(r);
  } catch (err) {
    return (err as Error).message;
  }
}

/** Resolves once `p` has settled, up to about 20 s (then undefined): nothing here may hang. */
async function within<T>(p: Promise<T>): Promise<T | undefined> {
  let value: T | undefined;
  let settled = false;
  void p.then((v) => ((value = v), (settled = true)));
  await until('settled', () => (settled ? true : undefined)).catch(() => undefined);
  return value;
}

/** The long-running tool of server-everything, started and reported by the upstream as under way. */
async function longCallUnderWay(agent: Parameters<typeof callTool>[0]): Promise<{ call: Promise<CallResult> }> {
  let progressed = false;
  const call = callTool(
    agent,
    'trigger-long-running-operation',
    { duration: 100, steps: 100 },
    { onprogress: () => (progressed = true), timeout: 120_000 },
  );
  await until('the long call to report progress', () => (progressed ? true : undefined));
  return { call };
}

/** A TCP relay to `port` whose open connections a test cuts, as a network blip does; new connections still work. */
async function startRelay(port: number): Promise<{ port: number; cut: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    cut: () => {
      const n = sockets.size;
      for (const s of sockets) s.destroy();
      return n;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const goneLine = (url: string) => `agent-judge mcp: the upstream MCP server at ${url} went away (`;

describe('stdio front, --upstream-url: the upstream goes away', () => {
  const upstreams: RunningProcess[] = [];
  afterAll(async () => {
    for (const u of upstreams) await u.stop();
  });

  it('killed while a call waits on it: the call gets an error, the proxy exits 1 naming the URL', async () => {
    const everything = await startEverythingHttp();
    upstreams.push(everything);
    const proxy = await spawnProxy(env, proxyArgsForUrl(env, everything.url));
    try {
      // A tool's own error result and a JSON-RPC error are answers from a live upstream: the proxy goes on.
      const invalid = await callTool(proxy.agent, 'echo', { message: 42 });
      expect(invalid.isError).toBe(true);
      expect(textOf(invalid)).toMatch(/validation/i);
      await expect(proxy.agent.getPrompt({ name: 'no-such-prompt' })).rejects.toThrow(/no-such-prompt/);
      expect(textOf(await callTool(proxy.agent, 'echo', { message: 'still here' }))).toContain('still here');
      expect(proxy.child.exitCode).toBeNull();

      const { call: waiting } = await longCallUnderWay(proxy.agent);
      everything.child.kill('SIGKILL');
      const failure = (await within(failureOf(waiting))) ?? 'no answer within 20 s';
      expect(failure).toContain(`the upstream MCP server at ${everything.url} went away`);
      expect(await within(proxy.exited)).toBe(1);
      const lines = proxy.stderr().trim().split('\n');
      expect(lines.at(-1)).toMatch(
        new RegExp(`^${literal(goneLine(everything.url))}(ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET)\\)$`),
      );
      expect(lines.filter((l) => l.includes('went away'))).toHaveLength(1);
      // The next call finds no proxy: an error at once, not a hang.
      expect(await within(failureOf(callTool(proxy.agent, 'echo', { message: 'anyone?' })))).toBeTruthy();
    } finally {
      proxy.child.kill('SIGKILL');
    }
  });

  it('killed while an approved judged call runs: refused, and the proposal records upstream_failure', async () => {
    const everything = await startEverythingHttp();
    upstreams.push(everything);
    // Without the trigger-* rule the long-running tool is unmapped: an mcp_tool_call a person decides.
    const judged = join(env.baseDir, 'policy-judged-long.json');
    const { mcp } = env.sys.policy.spec;
    const rules = mcp.rules.filter((r) => r.name !== 'everything.trigger');
    writeFileSync(
      judged,
      JSON.stringify({ ...env.sys.policy, spec: { ...env.sys.policy.spec, mcp: { ...mcp, rules } } }),
    );
    const proxy = await spawnProxy(env, proxyArgsForUrl({ ...env, policyFile: judged }, everything.url));
    try {
      const args = { duration: 100, steps: 100 };
      const pending = await callTool(proxy.agent, 'trigger-long-running-operation', args);
      expect(verdictOf(pending)).toMatchObject({ outcome: 'PENDING' });
      const workflowId = String(verdictOf(pending)!.workflow_id);
      await decide(
        env.sys.client,
        String(verdictOf(pending)!.proposal_id),
        { decision: 'approve', approver: 'scott', reason: 'fine', via: 'cli' },
        { key: scott },
      );
      const { call: waiting } = await longCallUnderWay(proxy.agent);
      expect((await getStatus(env.sys.client, workflowId)).caller?.forwarded_at).toBeTruthy();
      everything.child.kill('SIGKILL');
      const failure = (await within(failureOf(waiting))) ?? 'no answer within 20 s';
      expect(failure).toContain(`the upstream MCP server at ${everything.url} went away`);
      expect(await within(proxy.exited)).toBe(1);
      // The outcome was reported before the proxy exited.
      expect((await getStatus(env.sys.client, workflowId)).caller).toMatchObject({ outcome: 'upstream_failure' });
    } finally {
      proxy.child.kill('SIGKILL');
    }
  });

  it('its connections cut while it still answers (a network blip): the proxy goes on', async () => {
    const everything = await startEverythingHttp();
    upstreams.push(everything);
    const relay = await startRelay(Number(new URL(everything.url).port));
    const url = `http://127.0.0.1:${relay.port}/mcp`;
    const proxy = await spawnProxy(env, proxyArgsForUrl(env, url));
    try {
      expect(textOf(await callTool(proxy.agent, 'echo', { message: 'before' }))).toContain('before');
      expect(relay.cut()).toBeGreaterThan(0);
      // The proxy saw its background stream break; the upstream still answers, so nothing ends.
      await until('the broken stream to be noticed', () =>
        proxy.stderr().includes('SSE stream disconnected') ? true : undefined,
      );
      expect(textOf(await callTool(proxy.agent, 'echo', { message: 'after' }))).toContain('after');
      await new Promise((r) => setTimeout(r, 2000)); // the SDK reopens the GET stream after about 1 s
      expect(textOf(await callTool(proxy.agent, 'echo', { message: 'later' }))).toContain('later');
      expect(proxy.child.exitCode).toBeNull();
      expect(proxy.stderr()).not.toContain('went away');
    } finally {
      proxy.child.kill('SIGKILL');
      relay.cut();
      await relay.close();
    }
  });

  it('restarted on the same port, so it answers 404 to our session: the proxy exits 1 naming the 404', async () => {
    const first = await startSdkExampleHttp();
    upstreams.push(first);
    const port = Number(new URL(first.url).port);
    const proxy = await spawnProxy(env, proxyArgsForUrl(env, first.url));
    try {
      expect(textOf(await callTool(proxy.agent, 'greet', { name: 'agent' }))).toContain('Hello, agent!');
      // Idle keep-alive connections to the first server close after about 5 s; the proxy then holds only its GET
      // stream, and anything it sends after the restart opens a new connection to the new server.
      await new Promise((r) => setTimeout(r, 6000));
      // The proxy is stopped across the restart, so the first thing it sees afterwards is the new server.
      proxy.child.kill('SIGSTOP');
      const firstExited = new Promise((r) => first.child.once('exit', r));
      first.child.kill('SIGKILL');
      await firstExited;
      const second = await startSdkExampleHttp(port);
      upstreams.push(second);
      const next = failureOf(callTool(proxy.agent, 'greet', { name: 'again' }));
      proxy.child.kill('SIGCONT');
      expect(await within(next)).toBeTruthy();
      expect(await within(proxy.exited)).toBe(1);
      const lines = proxy.stderr().trim().split('\n');
      expect(lines.at(-1)).toMatch(new RegExp(`^${literal(goneLine(first.url))}it answered 404 to session \\S+\\)$`));
    } finally {
      proxy.child.kill('SIGCONT');
      proxy.child.kill('SIGKILL');
    }
  });
});

describe('--http front, --upstream-url: the upstream goes away', () => {
  it("killed: that session's waiting call gets an error and the session ends; the front serves on", async () => {
    const everything = await startEverythingHttp();
    const port = Number(new URL(everything.url).port);
    const front = await startHttpProxy(
      [
        '--policy',
        env.policyFile,
        '--address',
        env.address,
        '--namespace',
        env.namespace,
        '--task-queue-prefix',
        env.taskQueuePrefix,
        '--state-dir',
        `${env.baseDir}/.agent-judge`,
        '--upstream-url',
        everything.url,
      ],
      env.baseDir,
    );
    let restarted: RunningProcess | undefined;
    try {
      const agent = await connectHttp(front.url, ENGINEERING);
      const { call: waiting } = await longCallUnderWay(agent);
      everything.child.kill('SIGKILL');
      const failure = (await within(failureOf(waiting))) ?? 'no answer within 20 s';
      expect(failure).toContain(`the upstream MCP server at ${everything.url} went away`);
      await until('the session to end', () =>
        logRecordsOf(front.stderr()).some((r) => r.msg === 'session closed' && /went away/.test(String(r.why)))
          ? true
          : undefined,
      );
      // The session is gone: its next request is refused (404), at once.
      expect(await within(failureOf(callTool(agent, 'echo', { message: 'anyone?' })))).toMatch(/404|not found/i);
      await agent.close().catch(() => undefined);
      // The front itself is still up: once the upstream is back, a new session works.
      expect(front.child.exitCode).toBeNull();
      restarted = await startEverythingHttp(port);
      const again = await connectHttp(front.url, ENGINEERING);
      expect(textOf(await callTool(again, 'echo', { message: 'back' }))).toContain('back');
      await again.close();
    } finally {
      expect(await front.stop()).toBe(0);
      await restarted?.stop();
      await everything.stop();
    }
  });
});

describe('stdio front: the proxy is told to stop', () => {
  /** An upstream (server-everything, which does not exit when its stdin ends) that writes its pid to a file first. */
  function everythingWithPid(pidFile: string): string[] {
    return ['bash', '-c', `echo $$ > '${pidFile}'; exec '${process.execPath}' '${EVERYTHING_SERVER}' stdio`];
  }
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it('SIGTERM: the upstream is stopped with it, never left running; exit 143', async () => {
    const pidFile = join(env.baseDir, 'everything-sigterm.pid');
    const proxy = await spawnProxy(env, proxyArgs(env, everythingWithPid(pidFile)));
    try {
      expect(textOf(await callTool(proxy.agent, 'echo', { message: 'up' }))).toContain('up');
      const upstreamPid = Number(readFileSync(pidFile, 'utf8').trim());
      expect(alive(upstreamPid)).toBe(true);
      proxy.child.kill('SIGTERM');
      expect(await proxy.exited).toBe(143);
      // Left behind, it would hold the stderr the proxy passed on open: a client reading that to its end waited a
      // minute for the upstream to die on its own (the MCP Inspector did, on every run that raced).
      await until('the upstream to exit', () => (alive(upstreamPid) ? undefined : true), 40);
    } finally {
      proxy.child.kill('SIGKILL');
    }
  });
});

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
