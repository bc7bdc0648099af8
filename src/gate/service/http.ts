/**
 * What every HTTP front of the gate service checks before it reads a request, in one place: the Host header (DNS
 * rebinding: a page that rebinds a name to loopback sends its own Host), no browser Origin, and the agent's bearer
 * token, which alone decides whose request this is. Plus reading a bounded JSON body and answering JSON.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpHttpAgent } from '../../contracts/mcp';
import { jsonTextDepthProblem } from '../../contracts/json-depth';
import { agentForToken, bearerToken } from '../http-auth';

/** Loopback: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** True when `host` (a Host header) is a loopback name with the port the server listens on. */
export function loopbackHostAllowed(host: string | undefined, port: number): boolean {
  if (host === undefined) return false;
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(host);
  return m !== null && Number(m[2]) === port && isLoopbackHost(m[1]!);
}

/** Why a request may not be served before its body is read (403), or null: Host and Origin. */
export function requestProblem(req: IncomingMessage, port: number): string | null {
  if (!loopbackHostAllowed(req.headers.host, port)) return 'Forbidden: Host not allowed';
  if (req.headers.origin !== undefined) return 'Forbidden: browsers may not call the gate';
  return null;
}

/** The agent the request's bearer token belongs to, or null (no token, an unknown one). */
export function requestAgent(req: IncomingMessage, agents: readonly McpHttpAgent[]): string | null {
  const token = bearerToken(req.headers.authorization);
  return token === null ? null : agentForToken(agents, token);
}

/** Reads a body of at most `maxBytes`; null when it is larger (reading stops there). */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) resolve(null);
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Parses a JSON body, refusing one nested deeper than any contract allows before `JSON.parse` sees it. */
export function parseJsonBody(text: string, what: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const deep = jsonTextDepthProblem(text, what);
  if (deep) return { ok: false, error: deep };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, error: `${what}: not JSON (${(err as Error).message})` };
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

/** An error answer: `{ error, code }`, the code naming the rule that refused. */
export function sendError(
  res: ServerResponse,
  status: number,
  error: string,
  code?: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { error, ...(code ? { code } : {}) }, headers);
}
