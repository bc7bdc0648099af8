/**
 * Starting `agent-judge mcp --http` as a user does (the built CLI, a real process) and the upstreams
 * server-everything in its Streamable HTTP mode and the SDK's own example server, for the MCP HTTP and conformance
 * tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

// The same paths as the stdio tests, and the project's own free-port finder (the server-everything CLI takes its port
// from $PORT and cannot pick one itself).
import { BIN, EVERYTHING_SERVER, FS_SERVER, ROOT } from './mcp';
import { logRecordsOf } from './logger';
import { freePort } from '../../src/devserver/server';

export { BIN, EVERYTHING_SERVER, FS_SERVER, ROOT, freePort };

export interface RunningProcess {
  child: ChildProcess;
  stderr: () => string;
  /** Ends the process (SIGTERM, then SIGKILL after 5 s) and resolves with its exit code. */
  stop: () => Promise<number | null>;
}

function track(child: ChildProcess): RunningProcess {
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        const code = await exited;
        clearTimeout(timer);
        return code;
      }
      return exited;
    },
  };
}

export interface HttpProxy extends RunningProcess {
  url: string;
}

/** Starts `agent-judge mcp --http 127.0.0.1:0 <args>` and waits for its "listening" log line (or its exit). */
export async function startHttpProxy(args: string[], cwd: string): Promise<HttpProxy> {
  const child = spawn(process.execPath, [BIN, 'mcp', '--http', '127.0.0.1:0', ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const p = track(child);
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const listening = logRecordsOf(p.stderr()).find((r) => r.msg === 'listening');
      if (typeof listening?.url === 'string') {
        child.stderr?.off('data', onData);
        resolve(listening.url);
      }
    };
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the proxy exited (${code}) before listening: ${p.stderr()}`)));
  });
  return { ...p, url };
}

/**
 * The SDK's example Streamable HTTP server (tools `greet`, `multi-greet`, ...). Unlike server-everything, which
 * answers 400, it answers 404 to a session id it does not know, as MCP asks of a server that restarted.
 */
export const SDK_EXAMPLE_SERVER = join(
  ROOT,
  'node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js',
);

/** A Streamable HTTP server script on `port` (given in the variable `portVariable`); resolves once it answers. */
async function startHttpServer(
  what: string,
  args: string[],
  portVariable: string,
  port: number,
): Promise<RunningProcess & { url: string }> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, [portVariable]: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const p = track(child);
  const url = `http://127.0.0.1:${port}/mcp`;
  for (let i = 0; ; i++) {
    const up = await fetch(url, { method: 'GET' }).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || i > 300) {
      await p.stop();
      throw new Error(`${what} did not start on ${port}: ${p.stderr()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { ...p, url };
}

/** server-everything in its Streamable HTTP mode on `port` (a free one by default); resolves once it answers. */
export async function startEverythingHttp(port?: number): Promise<RunningProcess & { url: string }> {
  const args = [EVERYTHING_SERVER, 'streamableHttp'];
  return startHttpServer('server-everything', args, 'PORT', port ?? (await freePort()));
}

/** {@link SDK_EXAMPLE_SERVER} on `port` (a free one by default); resolves once it answers. */
export async function startSdkExampleHttp(port?: number): Promise<RunningProcess & { url: string }> {
  return startHttpServer('the SDK example server', [SDK_EXAMPLE_SERVER], 'MCP_PORT', port ?? (await freePort()));
}

/** The real SDK client over Streamable HTTP, with a bearer token (or none). */
export async function connectHttp(url: string, token?: string, name = 'test-agent'): Promise<Client> {
  const client = new Client({ name, version: '1' });
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** A child's direct children (pids), from /proc: each MCP session of a stdio upstream is one child process. */
export async function childrenOf(pid: number): Promise<number[]> {
  const { readFileSync, readdirSync } = await import('node:fs');
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}
