/**
 * `agent-judge mcp --http HOST:PORT`: the judge proxy served to agents over MCP Streamable HTTP (one endpoint,
 * `/mcp`, on node:http). MCP 2025-11-25's security warning for this transport is followed: the Origin and Host
 * headers are checked against DNS rebinding (403), the default bind is loopback, and every request carries a bearer
 * token (401 otherwise) whose hash the policy lists per agent; the token decides the agent id of every proposal.
 * Each MCP session gets its own relay and its own upstream connection (a stdio child, or an HTTP session to
 * `--upstream-url`), closed when the session ends (DELETE, idle timeout, or the front closing).
 */
import type { ProvenanceSettings } from '../contracts/provenance';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { SubmissionLimits } from '../client/limits';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { appendDropped } from '../audit/mcp-log';
import type { McpCounters } from '../metrics/mcp';
import { durationMs } from '../contracts/duration';
import { BadInputError } from '../contracts/errors';
import type { Logger } from '../contracts/logger';
import type { McpSettings } from '../contracts/mcp';
import { refuseBatch } from './admission';
import { agentForToken, bearerToken } from '../gate/http-auth';
import { isLoopbackHost } from '../gate/service/http';
import { McpJudgeProxy } from './proxy';
import { describeUpstream, oneLine, openUpstream, type UpstreamSpec } from './upstream';

/** The largest POST body read (the SDK transport's own default bound). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Sessions open at once: each holds an upstream connection (often a child process). */
export const MAX_SESSIONS = 256;

export interface HttpFrontOptions {
  host: string;
  port: number;
  settings: McpSettings;
  /** `spec.provenance`: each session's upstream results are its own (see ProxyOptions). */
  provenance?: ProvenanceSettings;
  /** The upstream's name in rules and audit lines. */
  server: string;
  upstream: UpstreamSpec;
  /** `--agent`: when given, only this agent's token is accepted. */
  onlyAgent?: string;
  /** `spec.limits.httpSessionsPerAgent`: one agent's sessions open at once (each holds an upstream connection). */
  sessionsPerAgent: number;
  /** Counts what the front and its sessions refuse (`agent-judge mcp --metrics`). */
  counters?: McpCounters;
  temporal: { client: Client; taskQueue: string; limits?: SubmissionLimits };
  auditLog: string;
  /** The command's logger; each session's proxy logs through a child carrying the session id and the agent. */
  logger: Logger;
  /** Passed to each session's proxy (see ProxyOptions.onJudgedCall). */
  onJudgedCall?: (tool: string) => void;
}

interface Session {
  id: string | undefined;
  agent: string;
  transport: StreamableHTTPServerTransport;
  proxy: McpJudgeProxy;
  /** HTTP responses of this session still open (an SSE stream, a held call). */
  open: number;
  lastActive: number;
  closed: boolean;
}

/** `HOST:PORT` (IPv6 in brackets) into its parts; names the flag and the rule on bad input. */
export function parseListen(value: string): { host: string; port: number } {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) {
    throw new BadInputError(`--http: expected HOST:PORT such as 127.0.0.1:8765 (port 0: any free port), got ${value}`);
  }
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

function hostWithPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`.toLowerCase();
}

function writeJson(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** A child of `logger` whose bindings are read when each line is written, not when it is made. */
function lazyChild(logger: Logger, bindings: () => Record<string, unknown>): Logger {
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (fields: object | string, msg?: string): void => {
      const child = logger.child(bindings());
      if (typeof fields === 'string') child[level](fields);
      else child[level](fields, msg);
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => lazyChild(logger, () => ({ ...bindings(), ...more })),
  };
}

/** The body as text, or null when it is larger than {@link MAX_BODY_BYTES}. */
function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      // Past the bound nothing more is kept; the rest is read and dropped so the 413 can still be sent.
      if (size > MAX_BODY_BYTES) resolve(null);
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export class McpHttpFront {
  private server: Server | undefined;
  private readonly sessions = new Map<string, Session>();
  /** Sessions created but not yet initialized (their id comes with the initialize answer). */
  private readonly starting = new Set<Session>();
  private sweeper: NodeJS.Timeout | undefined;
  private allowedHosts = new Set<string>();
  private allowedOrigins = new Set<string>();
  private readonly idleMs: number;
  /** How often idle sessions are looked for: one idles out at most this long after its deadline. */
  private readonly sweepMs: number;

  constructor(private readonly o: HttpFrontOptions) {
    this.idleMs = durationMs(o.settings.http.sessionIdle);
    this.sweepMs = Math.min(60_000, Math.max(1000, this.idleMs / 4));
  }

  /** Listens; resolves to the endpoint URL (the real port when 0 was asked for). */
  async start(): Promise<string> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        this.o.logger.error({ err: oneLine(err) }, 'request failed');
        writeJson(res, 500, 'Internal server error');
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = (server.address() as AddressInfo).port;
    // DNS rebinding: only the names this server is really reached by. Loopback names always; a non-loopback bind
    // address and whatever the policy lists besides.
    const hosts = ['127.0.0.1', 'localhost', '::1'];
    if (!isLoopbackHost(this.o.host) && this.o.host !== '0.0.0.0' && this.o.host !== '::') hosts.push(this.o.host);
    this.allowedHosts = new Set(hosts.map((h) => hostWithPort(h, port)));
    for (const h of this.o.settings.http.allowedHosts) this.allowedHosts.add(h.toLowerCase());
    this.allowedOrigins = new Set([...hosts.map((h) => `http://${hostWithPort(h, port)}`)]);
    for (const o of this.o.settings.http.allowedOrigins) this.allowedOrigins.add(o.toLowerCase());
    this.sweeper = setInterval(() => this.sweep(), this.sweepMs);
    this.sweeper.unref();
    return `http://${hostWithPort(this.o.host, port)}/mcp`;
  }

  /** Stops listening and ends every session: held calls are dropped, never forwarded; upstreams are closed. */
  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    const server = this.server;
    this.server = undefined;
    const closing = server ? new Promise<void>((r) => server.close(() => r())) : Promise.resolve();
    await Promise.all([...this.sessions.values(), ...this.starting].map((s) => this.endSession(s, 'the proxy stops')));
    server?.closeAllConnections();
    await closing;
  }

  private hostAllowed(host: string | undefined): boolean {
    if (host === undefined) return false;
    const h = host.toLowerCase();
    if (this.allowedHosts.has(h)) return true;
    // A listed name without a port allows that name on any port.
    const name = h.replace(/:[0-9]+$/, '');
    return this.o.settings.http.allowedHosts.some((a) => a.toLowerCase() === name);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/mcp') return writeJson(res, 404, 'Not Found: the MCP endpoint is /mcp');
    // DNS rebinding before anything else: a page that rebinds a name to this address sends its own Host and Origin.
    if (!this.hostAllowed(req.headers.host)) {
      return writeJson(res, 403, `Forbidden: Host header ${JSON.stringify(req.headers.host ?? '')} is not allowed`);
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !this.allowedOrigins.has(origin.toLowerCase())) {
      return writeJson(res, 403, `Forbidden: Origin ${JSON.stringify(origin)} is not allowed`);
    }
    const token = bearerToken(req.headers.authorization);
    const agent = token === null ? null : agentForToken(this.o.settings.http.agents, token);
    if (agent === null) {
      const challenge =
        token === null ? 'Bearer realm="agent-judge"' : 'Bearer realm="agent-judge", error="invalid_token"';
      return writeJson(res, 401, 'Unauthorized: a valid bearer token is required', {
        'www-authenticate': challenge,
      });
    }
    if (this.o.onlyAgent !== undefined && agent !== this.o.onlyAgent) {
      return writeJson(res, 403, `Forbidden: this proxy serves ${this.o.onlyAgent} only`);
    }

    let body: unknown;
    if (req.method === 'POST') {
      const text = await readBody(req);
      if (text === null) {
        return writeJson(res, 413, `Payload Too Large: more than ${MAX_BODY_BYTES} bytes`, { connection: 'close' });
      }
      try {
        body = JSON.parse(text);
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
        return;
      }
    }

    // Refused before any session sees it: each element would need admitting (and a tools/call judging) on its own.
    if (Array.isArray(body)) return this.refuseBatch(res, agent, body);

    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      // Another agent's session is as unknown as a closed one: a token reaches its own sessions only.
      if (!session || session.agent !== agent) return writeJson(res, 404, 'Session not found');
      return this.serve(session, req, res, body);
    }
    if (req.method !== 'POST' || !isJSONRPCRequest(body) || !isInitializeRequest(body)) {
      return writeJson(res, 400, 'Bad Request: No valid session ID provided');
    }
    // One agent's sessions are bounded before the shared bound: it cannot take the others' sessions (or upstreams).
    // A session is in both sets from its initialize answer until that request's handling returns: counted once.
    const mine = [...new Set([...this.sessions.values(), ...this.starting])].filter(
      (s) => s.agent === agent && !s.closed,
    );
    if (mine.length >= this.o.sessionsPerAgent) return this.tooManySessions(res, agent, mine, body.id);
    if (this.sessions.size + this.starting.size >= MAX_SESSIONS) {
      return writeJson(res, 503, `Service Unavailable: ${MAX_SESSIONS} sessions are open`);
    }
    const session = await this.newSession(agent);
    await this.serve(session, req, res, body);
    this.starting.delete(session);
    // An initialize the transport refused leaves no session behind, and no upstream connection.
    if (session.id === undefined) await this.endSession(session, 'initialize was refused');
  }

  private refuseBatch(res: ServerResponse, agent: string, batch: unknown[]): void {
    const refusal = refuseBatch(batch);
    this.o.logger.warn(
      { agent, reason: refusal.reason, detail: refusal.detail },
      'dropped a batch from the agent, not relayed',
    );
    this.o.counters?.dropped(refusal.reason);
    const record = {
      kind: 'mcp_dropped' as const,
      agent,
      server: this.o.server,
      reason: refusal.reason,
      method: refusal.method,
      answered: true,
      at: new Date().toISOString(),
    };
    void appendDropped(this.o.auditLog, record, this.o.logger);
    const body =
      refusal.answers.length > 0
        ? refusal.answers
        : { jsonrpc: '2.0', id: null, error: { code: -32600, message: refusal.detail } };
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  /**
   * 429 to an agent at `spec.limits.httpSessionsPerAgent`: the answer names the limit and when a session frees (its
   * client ends it, or the one closest to its idle deadline idles out by the time given, if nobody uses it).
   */
  private tooManySessions(res: ServerResponse, agent: string, mine: Session[], id: string | number): void {
    const now = Date.now();
    // A session with a request open does not idle: its deadline starts now at the earliest.
    const deadline = Math.min(...mine.map((s) => (s.open === 0 ? s.lastActive : now) + this.idleMs)) + this.sweepMs;
    const resetsAt = new Date(deadline).toISOString();
    const limit = `spec.limits.httpSessionsPerAgent (${this.o.sessionsPerAgent})`;
    const message =
      `Too Many Requests: ${agent} has ${mine.length} MCP sessions open, the limit ${limit}; a session frees when ` +
      `its client ends it (DELETE) or when it idles out (spec.mcp.http.sessionIdle ` +
      `${String(this.o.settings.http.sessionIdle)}): the next by ${resetsAt} if it stays unused`;
    this.o.logger.warn(
      { agent, limit: 'spec.limits.httpSessionsPerAgent', value: this.o.sessionsPerAgent, open: mine.length },
      'refused a session: the limit is reached',
    );
    this.o.counters?.sessionRefused();
    res.writeHead(429, {
      'content-type': 'application/json',
      'retry-after': String(Math.max(1, Math.ceil((deadline - now) / 1000))),
    });
    res.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        error: {
          code: -32000,
          message,
          data: { limit: 'spec.limits.httpSessionsPerAgent', value: this.o.sessionsPerAgent, resetsAt },
        },
      }),
    );
  }

  private async newSession(agent: string): Promise<Session> {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        session.id = id;
        this.sessions.set(id, session);
        this.o.logger.info({ session: id, agent }, 'session opened');
      },
    });
    const proxy = new McpJudgeProxy({
      front: transport,
      upstream: await openUpstream(this.o.upstream),
      settings: this.o.settings,
      ...(this.o.provenance ? { provenance: this.o.provenance } : {}),
      server: this.o.server,
      agentId: agent,
      temporal: this.o.temporal,
      auditLog: this.o.auditLog,
      // The id comes with the initialize answer, after the proxy is made: read when each line is written.
      logger: lazyChild(this.o.logger, () => ({ session: session.id, agent })),
      // The upstream of this session went away (or a tool collides): this session ends, the others go on.
      onFatal: (message) => void this.endSession(session, message),
      ...(this.o.onJudgedCall ? { onJudgedCall: this.o.onJudgedCall } : {}),
      ...(this.o.counters ? { counters: this.o.counters } : {}),
    });
    const session: Session = { id: undefined, agent, transport, proxy, open: 0, lastActive: Date.now(), closed: false };
    this.starting.add(session);
    try {
      await proxy.start();
    } catch (err) {
      this.starting.delete(session);
      await proxy.close().catch(() => undefined);
      throw new Error(`cannot start the upstream ${describeUpstream(this.o.upstream)}: ${oneLine(err)}`);
    }
    // DELETE from the client closes the transport: the session and its upstream end with it.
    transport.onclose = () => void this.endSession(session, 'closed by the client');
    return session;
  }

  private async serve(session: Session, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    session.open += 1;
    session.lastActive = Date.now();
    const requests = (Array.isArray(body) ? (body as unknown[]) : [body]).filter((m) => isJSONRPCRequest(m));
    res.on('close', () => {
      session.open -= 1;
      session.lastActive = Date.now();
      // The client dropped the connection before its answer: nobody can receive it (no resumption here), so the
      // request is treated as cancelled. A held tools/call is then never forwarded.
      if (!res.writableFinished && !session.closed) {
        for (const r of requests) {
          session.transport.onmessage?.({
            jsonrpc: '2.0',
            method: 'notifications/cancelled',
            params: { requestId: r.id, reason: 'the client disconnected' },
          });
        }
      }
    });
    await session.transport.handleRequest(req, res, body);
  }

  private async endSession(session: Session, why: string): Promise<void> {
    if (session.closed) return;
    session.closed = true;
    this.starting.delete(session);
    if (session.id !== undefined) {
      this.sessions.delete(session.id);
      this.o.logger.info({ session: session.id, agent: session.agent, why }, 'session closed');
    }
    await session.proxy.close();
  }

  /** Sessions nobody has used for `spec.mcp.http.sessionIdle` are closed, with their upstream connections. */
  private sweep(): void {
    const now = Date.now();
    for (const s of this.sessions.values()) {
      if (s.open === 0 && now - s.lastActive > this.idleMs) void this.endSession(s, 'idle');
    }
  }
}
