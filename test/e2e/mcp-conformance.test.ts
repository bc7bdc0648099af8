/**
 * Issue 10: the official MCP conformance suite (`@modelcontextprotocol/conformance`, run on the Node 22 binary it
 * needs) against the proxy.
 * - Server mode: the suite's client against `agent-judge mcp --http` (a no-judge policy, so it measures the relay)
 *   in front of server-everything, compared check by check with the same suite run against server-everything
 *   directly. The suite's server scenarios expect its own reference server's tools (test_*); server-everything has
 *   other tools, so some scenarios fail on it directly: a property of the upstream, which the relay must keep
 *   exactly, neither hiding nor adding failures. The one check the front must change is DNS rebinding protection.
 * - Client mode: the suite's test server is the upstream (`--upstream-url`) of a proxy an agent talks to; the suite
 *   records whether its tool was really called, so it proves a call not approved never reaches the upstream.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { tokenSha256, newAgentToken } from '../../src/gate/http-auth';
import { startSystem, testPolicy, type TestSystem } from '../helpers/system';
import { toolPath } from '../helpers/tools';
import {
  BIN,
  ROOT,
  startEverythingHttp,
  startHttpProxy,
  type HttpProxy,
  type RunningProcess,
} from '../helpers/mcp-http';

// The test setup installs both (scripts/test-tools.mjs): Node 22 and the suite, outside the project's node_modules.
const NODE22 = toolPath('node22');
const SUITE = toolPath('conformance');
const AGENT = join(ROOT, 'test/helpers/conformance-agent.mjs');

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
  details?: Record<string, unknown>;
}

/** Runs the suite; resolves to every check it recorded, by scenario (read from its results folder). */
function runSuite(args: string[], outDir: string, env: NodeJS.ProcessEnv = process.env) {
  return new Promise<{ code: number | null; output: string; checks: Map<string, Check[]> }>((resolve) => {
    const child = spawn(NODE22, [SUITE, ...args, '-o', outDir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (code) => {
      const checks = new Map<string, Check[]>();
      for (const dir of existsSync(outDir) ? readdirSync(outDir) : []) {
        const file = join(outDir, dir, 'checks.json');
        if (!existsSync(file)) continue;
        // Folders are `server-<scenario>-<time>` (server mode) or `<scenario>-<time>` (client mode).
        const scenario = dir.replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '').replace(/^server-/, '');
        checks.set(scenario, JSON.parse(readFileSync(file, 'utf8')) as Check[]);
      }
      resolve({ code, output, checks });
    });
  });
}

/**
 * The suite's client sends no credentials: this stands in for what a deployment puts in front of the proxy (a TLS
 * terminator that adds the agent's token). It forwards every request byte for byte, Host and Origin included, and
 * adds one header: `Authorization: Bearer <token>`.
 */
function startTokenForwarder(token: string, target: () => number): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const upstream = request(
      {
        host: '127.0.0.1',
        port: target(),
        path: req.url,
        method: req.method,
        headers: { ...req.headers, authorization: `Bearer ${token}` },
      },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port })),
  );
}

describe('the MCP conformance suite, server mode, against the --http front', () => {
  let sys: TestSystem;
  let everything: RunningProcess & { url: string };
  let proxy: HttpProxy;
  let forwarder: { server: Server; port: number };
  let outDir: string;
  const token = newAgentToken();
  beforeAll(async () => {
    sys = await startSystem({ roles: ['workflow'] });
    outDir = join(sys.baseDir, 'conformance');
    everything = await startEverythingHttp();
    let proxyPort = 0;
    forwarder = await startTokenForwarder(token, () => proxyPort);
    const f = forwarder.port;
    const policy = testPolicy(sys.baseDir, {
      mcp: {
        server: 'everything',
        rules: [{ name: 'all', tool: '*', tier: 'no-judge' }],
        http: {
          agents: [{ agent: '@conformance', tokenSha256: tokenSha256(token) }],
          // The forwarder's names are the ones clients use: listed as a deployment lists its TLS terminator's.
          allowedHosts: [`localhost:${f}`, `127.0.0.1:${f}`],
          allowedOrigins: [`http://localhost:${f}`, `http://127.0.0.1:${f}`],
          sessionIdle: '30s',
        },
      },
      // The suite opens a session per scenario (about 30) and ends none of them: all one agent's, all within 30 s.
      limits: { httpSessionsPerAgent: 64 },
    });
    const policyFile = join(sys.baseDir, 'policy.json');
    writeFileSync(policyFile, JSON.stringify(policy));
    proxy = await startHttpProxy(
      [
        '--policy',
        policyFile,
        '--address',
        inject('temporalAddress'),
        '--namespace',
        inject('temporalNamespace'),
        '--task-queue-prefix',
        sys.taskQueues.workflow,
        '--state-dir',
        join(sys.baseDir, '.agent-judge'),
        '--upstream-url',
        everything.url,
      ],
      sys.baseDir,
    );
    proxyPort = Number(new URL(proxy.url).port);
  });
  afterAll(async () => {
    await new Promise((r) => forwarder?.server.close(r));
    forwarder?.server.closeAllConnections();
    await proxy?.stop();
    await everything?.stop();
    await sys?.stop();
  });

  it('each check ends as it does on the upstream directly, except DNS rebinding, now refused', async () => {
    const direct = await runSuite(
      ['server', '--url', everything.url.replace('127.0.0.1', 'localhost')],
      join(outDir, 'direct'),
    );
    const proxied = await runSuite(
      ['server', '--url', `http://localhost:${forwarder.port}/mcp`],
      join(outDir, 'proxy'),
    );
    expect(proxied.checks.size, proxied.output).toBeGreaterThanOrEqual(30);
    expect([...proxied.checks.keys()].sort()).toEqual([...direct.checks.keys()].sort());

    const statuses = (checks: Map<string, Check[]>) =>
      Object.fromEntries([...checks].flatMap(([s, cs]) => cs.map((c) => [`${s}/${c.id}`, c.status])));
    const viaProxy = statuses(proxied.checks);
    const viaDirect = statuses(direct.checks);
    const rebinding = 'dns-rebinding-protection/localhost-host-rebinding-rejected';
    // server-everything itself accepts a foreign Host/Origin (200); the front refuses it (403).
    expect(viaDirect[rebinding]).toBe('FAILURE');
    expect(viaProxy[rebinding]).toBe('SUCCESS');
    const rebindingCheck = proxied.checks.get('dns-rebinding-protection')!.find((c) => c.id !== rebinding);
    // ... and accepts the valid localhost Host/Origin.
    expect(rebindingCheck, JSON.stringify(proxied.checks.get('dns-rebinding-protection'))).toMatchObject({
      status: 'SUCCESS',
    });
    delete viaProxy[rebinding];
    delete viaDirect[rebinding];
    expect(viaProxy).toEqual(viaDirect);
    const passed = Object.entries(viaProxy)
      .filter(([, s]) => s === 'SUCCESS')
      .map(([k]) => k);
    // The protocol-level scenarios pass through the relay (the rest depend on the reference server's test_* tools).
    for (const scenario of [
      'server-initialize',
      'ping',
      'logging-set-level',
      'tools-list',
      'resources-list',
      'resources-subscribe',
      'resources-unsubscribe',
      'prompts-list',
      'server-sse-multiple-streams',
    ]) {
      expect(
        passed.some((k) => k.startsWith(`${scenario}/`)),
        scenario,
      ).toBe(true);
    }
    console.info(
      `conformance server mode through the proxy: ${passed.length + 1} checks pass ` +
        `(${[...passed, rebinding].join(', ')}); the same checks as server-everything directly, plus DNS rebinding`,
    );
  });
});

describe('the MCP conformance suite, client mode: the proxy as the client of its test server', () => {
  let sys: TestSystem;
  let dir: string;
  beforeAll(async () => {
    sys = await startSystem({ spec: { judge: { withoutModel: 'escalate' } } });
    dir = join(sys.baseDir, 'conformance');
    mkdirSync(dir, { recursive: true });
  });
  afterAll(async () => {
    await sys?.stop();
  });

  function agentEnv(rules: unknown[], name: string): NodeJS.ProcessEnv {
    const policyFile = join(dir, `${name}.json`);
    writeFileSync(
      policyFile,
      JSON.stringify(testPolicy(sys.baseDir, { mcp: { server: 'calc', holdFor: '2s', rules } })),
    );
    const args = [
      '--agent',
      '@conformance',
      '--policy',
      policyFile,
      '--address',
      inject('temporalAddress'),
      '--namespace',
      inject('temporalNamespace'),
      '--task-queue-prefix',
      sys.taskQueues.workflow,
      '--state-dir',
      join(sys.baseDir, '.agent-judge'),
    ];
    return { ...process.env, AGENT_JUDGE_CONFORMANCE: JSON.stringify({ bin: BIN, args }) };
  }

  const command = `${process.execPath} ${AGENT}`;

  it('initialize: the agent’s own handshake reaches the test server through the relay', async () => {
    const r = await runSuite(
      ['client', '--command', command, '--scenario', 'initialize'],
      join(dir, 'init'),
      agentEnv([], 'init'),
    );
    const checks = [...r.checks.values()].flat();
    expect(checks.length, r.output).toBeGreaterThan(0);
    expect(
      checks.filter((c) => c.status === 'FAILURE'),
      r.output,
    ).toEqual([]);
    expect(checks.find((c) => c.id === 'mcp-client-initialization')?.details).toMatchObject({
      clientName: 'agent-judge-conformance-agent',
    });
  });

  it('tools_call: a no-judge call reaches the upstream; a call a person must decide never does', async () => {
    const passes = await runSuite(
      ['client', '--command', command, '--scenario', 'tools_call'],
      join(dir, 'no-judge'),
      agentEnv([{ name: 'calc.add', tool: 'add_numbers', tier: 'no-judge' }], 'no-judge'),
    );
    const called = [...passes.checks.values()].flat().find((c) => c.id === 'tool-add-numbers');
    expect(called, passes.output).toMatchObject({ status: 'SUCCESS', details: { a: 5, b: 3, result: 8 } });

    // No rule: add_numbers becomes an mcp_tool_call, human-only. Nobody decides: the agent is told "pending".
    const held = await runSuite(
      ['client', '--command', command, '--scenario', 'tools_call'],
      join(dir, 'held'),
      agentEnv([], 'held'),
    );
    const notCalled = [...held.checks.values()].flat().find((c) => c.id === 'tool-add-numbers');
    expect(notCalled, held.output).toMatchObject({
      status: 'FAILURE',
      details: { message: 'Tool was not called by client' },
    });
    const stdout = readdirSync(join(dir, 'held')).map((d) => join(dir, 'held', d, 'stdout.txt'));
    const seen = stdout
      .filter((f) => existsSync(f))
      .map((f) => readFileSync(f, 'utf8'))
      .join('');
    expect(seen).toContain('pending: not performed; call again later');
  });
});
