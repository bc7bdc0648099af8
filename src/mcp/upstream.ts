/**
 * The one upstream MCP server behind the proxy: a stdio child (`-- <command>`) or a Streamable HTTP server
 * (`--upstream-url`). Both are plain SDK `Transport`s, so the relay (proxy.ts) does not know which it speaks to.
 * `probeUpstream` connects once before the proxy accepts anything: an upstream that cannot be reached, or whose
 * tools collide with `_agent_judge`, refuses the start (fail closed) instead of failing an agent's first call.
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { BadInputError } from '../contracts/errors';
import { augmentToolsList, type ToolDefinition } from './tools';

export type UpstreamSpec = { kind: 'stdio'; command: string; args: string[] } | { kind: 'http'; url: URL };

/** How long the start-up probe waits for the upstream's initialize and tools/list answers. */
const PROBE_TIMEOUT_MS = 30_000;

/** Exactly one of `--upstream-url` or an upstream command; a URL must be http(s) with no credentials in it. */
export function upstreamSpec(url: string | undefined, command: string[]): UpstreamSpec {
  if (url !== undefined && command.length > 0) {
    throw new BadInputError(
      '--upstream-url: give either --upstream-url or an upstream command after --, not both ' +
        `(got the command ${JSON.stringify(command[0])})`,
    );
  }
  if (url !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new BadInputError(`--upstream-url: expected an http(s) URL such as http://127.0.0.1:3001/mcp, got ${url}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new BadInputError(`--upstream-url: expected an http: or https: URL, got ${parsed.protocol}`);
    }
    if (parsed.username || parsed.password) {
      throw new BadInputError('--upstream-url: credentials in the URL are refused (they would end up in logs)');
    }
    return { kind: 'http', url: parsed };
  }
  const [first, ...rest] = command;
  if (!first) {
    throw new BadInputError(
      'upstream: required (the MCP server command after --, e.g. -- npx -y server, or --upstream-url URL)',
    );
  }
  return { kind: 'stdio', command: first, args: rest };
}

/** The upstream in one short phrase, for log and error lines. */
export function describeUpstream(spec: UpstreamSpec): string {
  return spec.kind === 'http' ? spec.url.href : spec.command;
}

/** The environment a stdio upstream gets: the proxy's own (it was started with whatever the client gave it). */
function childEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
}

/** A transport to the upstream, not started yet (the relay starts it). */
export async function openUpstream(spec: UpstreamSpec, stderr: 'inherit' | 'ignore' = 'inherit'): Promise<Transport> {
  if (spec.kind === 'stdio') {
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    return new StdioClientTransport({ command: spec.command, args: spec.args, env: childEnv(), stderr });
  }
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  return new HttpUpstream(new StreamableHTTPClientTransport(spec.url));
}

interface HttpClientTransport extends Transport {
  setProtocolVersion(version: string): void;
  terminateSession(): Promise<void>;
}

/**
 * A Streamable HTTP upstream as the relay needs it. The SDK `Client` normally tells its transport the negotiated
 * protocol version (the `MCP-Protocol-Version` header on every later request); the relay forwards the agent's own
 * `initialize` instead, so this wrapper reads the version from the upstream's answer. Closing ends the upstream
 * session with a DELETE, so an HTTP upstream does not keep one session per ended agent session.
 */
class HttpUpstream implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly initializeIds = new Set<string | number>();

  constructor(private readonly inner: HttpClientTransport) {
    inner.onmessage = (m) => {
      const r = m as { id?: string | number; result?: { protocolVersion?: unknown } };
      if (r.id !== undefined && this.initializeIds.delete(r.id) && typeof r.result?.protocolVersion === 'string') {
        inner.setProtocolVersion(r.result.protocolVersion);
      }
      this.onmessage?.(m);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (e) => this.onerror?.(e);
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const m = message as { id?: string | number; method?: string };
    if (m.method === 'initialize' && m.id !== undefined) this.initializeIds.add(m.id);
    return this.inner.send(message, options);
  }

  async close(): Promise<void> {
    await Promise.race([
      this.inner.terminateSession().catch(() => undefined),
      new Promise((r) => setTimeout(r, 2000).unref()),
    ]);
    await this.inner.close();
  }
}

/** Why a connection attempt failed, on one line (fetch hides the socket error in `cause`). */
export function oneLine(err: unknown): string {
  const e = err as Error & { cause?: { message?: string; code?: string } };
  const cause = e.cause?.code ?? e.cause?.message;
  const text = cause && !e.message.includes(cause) ? `${e.message} (${cause})` : e.message;
  return text.replace(/\s*[\r\n]+\s*/g, ' ').slice(0, 500);
}

/**
 * Whether a Streamable HTTP upstream answers at all (any HTTP status), without opening an MCP session: the stdio
 * front checks this before it starts, so an unreachable URL refuses the start while the upstream still sees the
 * agent's own `initialize` as its first (the relay learns the tools from the agent's session).
 */
export async function reachUpstream(spec: UpstreamSpec): Promise<void> {
  if (spec.kind !== 'http') return;
  try {
    const r = await fetch(spec.url, {
      method: 'GET',
      headers: { accept: 'text/event-stream' },
      redirect: 'manual',
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    await r.body?.cancel();
  } catch (err) {
    throw new Error(`cannot reach the upstream MCP server ${describeUpstream(spec)}: ${oneLine(err)}`);
  }
}

/**
 * Connects an SDK client to the upstream, pages through its tools, and closes. Throws a one-line error when the
 * upstream cannot be reached or answers badly, and the collision error when a tool already has `_agent_judge`.
 */
export async function probeUpstream(spec: UpstreamSpec): Promise<ToolDefinition[]> {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const client = new Client({ name: 'agent-judge-mcp-probe', version: '1' });
  const tools: ToolDefinition[] = [];
  try {
    try {
      await client.connect(await openUpstream(spec, 'ignore'), { timeout: PROBE_TIMEOUT_MS });
    } catch (err) {
      throw new Error(`cannot reach the upstream MCP server ${describeUpstream(spec)}: ${oneLine(err)}`);
    }
    if (!client.getServerCapabilities()?.tools) return tools;
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const r = await client.listTools(cursor ? { cursor } : {}, { timeout: PROBE_TIMEOUT_MS });
      augmentToolsList(r); // throws on a collision
      tools.push(...r.tools);
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    return tools;
  } finally {
    await client.close().catch(() => undefined);
  }
}
