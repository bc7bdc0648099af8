/**
 * Issue 10, the pure parts of the proxy's HTTP modes: `spec.mcp.http` (per-agent token digests, accepted hosts and
 * origins) as the policy loader reports it, the bearer tokens and their constant-time lookup, and the flag rules of
 * `--http` and `--upstream-url`, and when an HTTP upstream counts as gone.
 */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { McpHttpSettingsSchema } from '../../src/contracts/mcp';
import { jsonSchemaOf } from '../../src/cli/schema';
import { agentForToken, bearerToken, newAgentToken, tokenSha256, TOKEN_PREFIX } from '../../src/gate/http-auth';
import { parseListen } from '../../src/mcp/http-front';
import { isLoopbackHost } from '../../src/gate/service/http';
import { goneBecause, upstreamSpec } from '../../src/mcp/upstream';
import { freePort } from '../../src/devserver/server';
import { testPolicy } from '../helpers/system';

const issues = (value: unknown) => {
  const r = McpHttpSettingsSchema.safeParse(value);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('spec.mcp.http', () => {
  it('defaults to no agents (so --http refuses to start) and a 30m idle bound', () => {
    expect(testPolicy('/tmp').spec.mcp.http).toEqual({
      agents: [],
      allowedHosts: [],
      allowedOrigins: [],
      sessionIdle: '30m',
    });
  });

  it('keeps token digests, never tokens: a token in tokenSha256 is refused, naming the field', () => {
    const token = newAgentToken();
    expect(issues({ agents: [{ agent: '@eng', tokenSha256: tokenSha256(token) }] })).toEqual([]);
    expect(issues({ agents: [{ agent: '@eng', tokenSha256: token }] })).toEqual([
      'agents.0.tokenSha256: expected the SHA-256 of the token as 64 lowercase hex digits (agent-judge mcp token)',
    ]);
    expect(issues({ agents: [{ agent: 'a b', tokenSha256: tokenSha256(token) }] })[0]).toMatch(/^agents\.0\.agent: /);
    expect(issues({ agents: [{ agent: '@eng', tokenSha256: tokenSha256(token), extra: 1 }] })[0]).toMatch(
      /^agents\.0: /,
    );
  });

  it('one token names one agent: a repeated digest is refused; two tokens for one agent are fine', () => {
    const d = tokenSha256(newAgentToken());
    expect(
      issues({
        agents: [
          { agent: '@a', tokenSha256: d },
          { agent: '@b', tokenSha256: d },
        ],
      }),
    ).toEqual(['agents.1.tokenSha256: the same token digest as agents[0]: one token names one agent']);
    expect(
      issues({
        agents: [
          { agent: '@a', tokenSha256: d },
          { agent: '@a', tokenSha256: tokenSha256(newAgentToken()) },
        ],
      }),
    ).toEqual([]);
  });

  it('accepted hosts and origins are names, not patterns or URLs with paths', () => {
    expect(issues({ allowedHosts: ['mcp.example.org', 'mcp.example.org:8443', '[::1]:9000'] })).toEqual([]);
    expect(issues({ allowedHosts: ['*.example.org'] })[0]).toMatch(/^allowedHosts\.0: expected a host/);
    expect(issues({ allowedOrigins: ['https://app.example.org'] })).toEqual([]);
    expect(issues({ allowedOrigins: ['https://app.example.org/path'] })[0]).toMatch(/^allowedOrigins\.0: /);
    expect(issues({ allowedOrigins: ['null'] })[0]).toMatch(/^allowedOrigins\.0: /);
  });

  it('appears in `agent-judge schema policy`', () => {
    const schema = JSON.stringify(jsonSchemaOf('policy'));
    expect(schema).toContain('tokenSha256');
    expect(schema).toContain('allowedOrigins');
  });
});

describe('bearer tokens', () => {
  it('a fresh token is 256 random bits, prefixed; its digest is SHA-256 hex', () => {
    const a = newAgentToken();
    expect(a).toMatch(new RegExp(`^${TOKEN_PREFIX}[A-Za-z0-9_-]{43}$`));
    expect(newAgentToken()).not.toBe(a);
    // SHA-256("abc"), the FIPS 180-2 test vector.
    expect(tokenSha256('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('the token decides the agent; an unknown token decides nothing', () => {
    const eng = newAgentToken();
    const res = newAgentToken();
    const agents = [
      { agent: '@engineering', tokenSha256: tokenSha256(eng) },
      { agent: '@research', tokenSha256: tokenSha256(res) },
    ];
    expect(agentForToken(agents, eng)).toBe('@engineering');
    expect(agentForToken(agents, res)).toBe('@research');
    expect(agentForToken(agents, newAgentToken())).toBeNull();
    expect(agentForToken(agents, tokenSha256(eng))).toBeNull(); // the digest itself is not a token
    expect(agentForToken([], eng)).toBeNull();
  });

  it('reads only `Authorization: Bearer <token>`', () => {
    expect(bearerToken('Bearer ajt_abc')).toBe('ajt_abc');
    expect(bearerToken('bearer ajt_abc')).toBe('ajt_abc');
    expect(bearerToken(undefined)).toBeNull();
    expect(bearerToken('Basic eDp5')).toBeNull();
    expect(bearerToken('Bearer ')).toBeNull();
    expect(bearerToken('Bearer a b')).toBeNull();
  });
});

describe('--http and --upstream-url', () => {
  it('--http is HOST:PORT; loopback is 127/8, ::1 and localhost', () => {
    expect(parseListen('127.0.0.1:8765')).toEqual({ host: '127.0.0.1', port: 8765 });
    expect(parseListen('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(() => parseListen('8765')).toThrow(/^--http: expected HOST:PORT/);
    expect(() => parseListen('127.0.0.1:70000')).toThrow(/^--http: expected HOST:PORT/);
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', 'example.org']) expect(isLoopbackHost(h)).toBe(false);
  });

  it('exactly one of --upstream-url or an upstream command', () => {
    expect(upstreamSpec(undefined, ['npx', '-y', 'server'])).toEqual({
      kind: 'stdio',
      command: 'npx',
      args: ['-y', 'server'],
    });
    expect(upstreamSpec('http://127.0.0.1:3001/mcp', [])).toMatchObject({ kind: 'http' });
    expect(() => upstreamSpec('http://127.0.0.1:3001/mcp', ['npx'])).toThrow(/^--upstream-url: give either/);
    expect(() => upstreamSpec(undefined, [])).toThrow(/^upstream: required/);
    expect(() => upstreamSpec('not a url', [])).toThrow(/^--upstream-url: expected an http\(s\) URL/);
    expect(() => upstreamSpec('file:///etc/passwd', [])).toThrow(/^--upstream-url: expected an http: or https:/);
    expect(() => upstreamSpec('https://user:secret@mcp.example.org/mcp', [])).toThrow(/credentials in the URL/);
  });
});

describe('an HTTP upstream is gone when', () => {
  it('requests get no HTTP answer at all (the real fetch error of a port nobody listens on)', async () => {
    const port = await freePort();
    const refused = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST' }).then(
      () => new Error('answered'),
      (err: Error) => err,
    );
    // Not final on its own: after a blip one request can still go out on a stale connection (a second ping decides).
    expect(goneBecause(refused, 'session-1')).toEqual({ reason: 'ECONNREFUSED', final: false });
    expect(goneBecause(refused, undefined)).toEqual({ reason: 'ECONNREFUSED', final: false });
  });

  it('it answers 404 to a request that carried our session, and only then', () => {
    const notFound = new StreamableHTTPError(404, 'Error POSTing to endpoint: Session not found');
    expect(goneBecause(notFound, 'session-1')).toEqual({ reason: 'it answered 404 to session session-1', final: true });
    expect(goneBecause(notFound, undefined)).toBeUndefined();
  });

  it('not on any other HTTP status, a JSON-RPC error, or our own abort', () => {
    for (const status of [400, 401, 403, 405, 500, 503]) {
      expect(goneBecause(new StreamableHTTPError(status, 'x'), 'session-1'), String(status)).toBeUndefined();
    }
    expect(goneBecause(new McpError(-32602, 'Prompt not found'), 'session-1')).toBeUndefined();
    const aborted = new AbortController();
    aborted.abort();
    expect(goneBecause(aborted.signal.reason, 'session-1')).toBeUndefined();
  });
});
