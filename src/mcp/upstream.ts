/**
 * The one upstream MCP server behind the proxy: a stdio child (`-- <command>`) or a Streamable HTTP server
 * (`--upstream-url`). Both are plain SDK `Transport`s, so the relay (relay.ts) does not know which it speaks to.
 * `probeUpstream` connects once before the proxy accepts anything: an upstream that cannot be reached, or whose
 * tools collide with `_agent_judge`, refuses the start (fail closed) instead of failing an agent's first call.
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { AgentJudgeError, BadInputError } from '../contracts/errors';
import { augmentToolsList, type ToolDefinition } from './tools';
import { processEnv } from '../config/process-env';

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
  return Object.fromEntries(Object.entries(processEnv()).filter((e): e is [string, string] => e[1] !== undefined));
}

/** A transport to the upstream, not started yet (the relay starts it). */
export async function openUpstream(spec: UpstreamSpec, stderr: 'inherit' | 'ignore' = 'inherit'): Promise<Transport> {
  if (spec.kind === 'stdio') {
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    return new StdioClientTransport({ command: spec.command, args: spec.args, env: childEnv(), stderr });
  }
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  return new HttpUpstream(new StreamableHTTPClientTransport(spec.url), spec.url);
}

/**
 * Sends SIGTERM to a stdio upstream's process, at once (the SDK's own close first waits two seconds for it to exit on
 * its own); a Streamable HTTP upstream has no process here and is left to its close.
 */
export function stopUpstream(transport: Transport): void {
  const pid = (transport as { pid?: unknown }).pid;
  if (typeof pid !== 'number') return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // Exited already.
  }
}

/**
 * A Streamable HTTP upstream is gone: reported on the transport's `onerror` just before its `onclose`, so the relay
 * ends the way it does when a stdio upstream exits, naming the URL and why.
 */
export class UpstreamGoneError extends AgentJudgeError {
  constructor(url: URL, reason: string) {
    super(`the upstream MCP server at ${url.href} went away (${reason})`);
  }
}

/** Socket-level codes that mean the request never got an HTTP answer from the upstream. */
const CONNECTION_LOST = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'UND_ERR_SOCKET']);

/** Why a request says the upstream may be gone; `final` when one answer settles it. */
export interface GoneSign {
  reason: string;
  final: boolean;
}

/**
 * What one failed `send` of the SDK transport says about a Streamable HTTP upstream; undefined when it answered (any
 * other HTTP status, a JSON-RPC error or a tool's error result is an answer from a live upstream). A 404 to a request
 * that carried our session id is final (MCP: the server no longer knows the session, and only a new `initialize`,
 * which the agent already sent once, would open another). No HTTP answer at all (connection refused or reset, socket
 * hang up, fetch failed) is not final on its own: after a blip one request can still go out on a stale connection.
 */
export function goneBecause(err: unknown, sessionId: string | undefined): GoneSign | undefined {
  const e = err as Error & { code?: unknown; cause?: { code?: unknown } };
  // The SDK's StreamableHTTPError carries the HTTP status as a number; socket errors carry string codes.
  if (typeof e.code === 'number') {
    return e.code === 404 && sessionId !== undefined
      ? { reason: `it answered 404 to session ${sessionId}`, final: true }
      : undefined;
  }
  const code = typeof e.cause?.code === 'string' ? e.cause.code : typeof e.code === 'string' ? e.code : undefined;
  if (code !== undefined && CONNECTION_LOST.has(code)) return { reason: code, final: false };
  const noAnswer = e.message === 'fetch failed' || /socket hang up/i.test(e.message ?? '');
  return noAnswer ? { reason: oneLine(err), final: false } : undefined;
}

/** The ids of this wrapper's own liveness pings (their answers are not the relay's). */
const PING_PREFIX = 'agent-judge/alive-';
/** How long after a ping that got no answer the second one goes out (stale connections are closed by then). */
const REPING_MS = 500;

interface HttpClientTransport extends Transport {
  setProtocolVersion(version: string): void;
  terminateSession(): Promise<void>;
}

/**
 * A Streamable HTTP upstream as the relay needs it. The SDK `Client` normally tells its transport the negotiated
 * protocol version (the `MCP-Protocol-Version` header on every later request); the relay forwards the agent's own
 * `initialize` instead, so this wrapper reads the version from the upstream's answer. Closing ends the upstream
 * session with a DELETE, so an HTTP upstream does not keep one session per ended agent session.
 *
 * An HTTP upstream has no process to watch, so this wrapper closes itself (the relay's `onclose`, as when a stdio
 * child exits) once requests show the upstream is gone: a 404 to our session, or two pings in a row that get no HTTP
 * answer, the second half a second after the first ({@link goneBecause}). The SDK's `onerror` decides nothing itself:
 * it also fires for a blip of the optional GET stream, which the SDK reopens on its own. It only makes this wrapper
 * send a `ping`, a real request, so a dead upstream is noticed while a call waits on a broken stream or nothing is
 * being sent, and a live one answers and nothing happens.
 */
class HttpUpstream implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly initializeIds = new Set<string | number>();
  private pings = 0;
  private pinging = false;
  private gone: UpstreamGoneError | undefined;

  constructor(
    private readonly inner: HttpClientTransport,
    private readonly url: URL,
  ) {
    inner.onmessage = (m) => {
      const r = m as { id?: string | number; result?: { protocolVersion?: unknown } };
      if (typeof r.id === 'string' && r.id.startsWith(PING_PREFIX)) return;
      if (r.id !== undefined && this.initializeIds.delete(r.id) && typeof r.result?.protocolVersion === 'string') {
        inner.setProtocolVersion(r.result.protocolVersion);
      }
      this.onmessage?.(m);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (e) => {
      if (this.gone) return; // the aborted streams and requests of a closed transport say nothing new
      this.onerror?.(e);
      this.ping();
    };
  }

  /** One ping at a time (a failing ping reports on `onerror` too, which must not start another). */
  private ping(second = false): void {
    if (this.pinging || this.gone) return;
    this.pinging = true;
    const sessionId = this.inner.sessionId;
    const ping = { jsonrpc: '2.0' as const, id: `${PING_PREFIX}${++this.pings}`, method: 'ping' };
    let again = false;
    const wait = second ? new Promise((r) => setTimeout(r, REPING_MS)) : Promise.resolve();
    void wait
      .then(() => (this.gone ? undefined : this.inner.send(ping)))
      .catch((err: unknown) => {
        const sign = goneBecause(err, sessionId);
        if (sign && (sign.final || second)) this.wentAway(sign.reason);
        else again = sign !== undefined;
      })
      .finally(() => {
        this.pinging = false;
        if (again) this.ping(true);
      });
  }

  private wentAway(reason: string): void {
    if (this.gone) return;
    this.gone = new UpstreamGoneError(this.url, reason);
    this.onerror?.(this.gone);
    // No DELETE: nobody is there to receive it. Closing stops the SDK's reconnects and reports onclose.
    void this.inner.close();
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const m = message as { id?: string | number; method?: string };
    if (m.method === 'initialize' && m.id !== undefined) this.initializeIds.add(m.id);
    if (this.gone) throw this.gone;
    const sessionId = this.inner.sessionId;
    try {
      await this.inner.send(message, options);
    } catch (err) {
      // A failure without an HTTP answer has started a ping already (onerror); a 404 to our session settles it here.
      const sign = goneBecause(err, sessionId);
      if (!sign?.final) throw err;
      this.wentAway(sign.reason);
      throw this.gone ?? err;
    }
  }

  async close(): Promise<void> {
    if (this.gone) return;
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
