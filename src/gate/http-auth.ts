/**
 * Agents' bearer tokens, shared by every HTTP front of the gate (`agent-judge mcp --http`, the hooks gate server): one
 * random token per agent, of which the policy keeps only the SHA-256 (a leaked policy file grants nothing). The token,
 * not a flag, decides whose calls these are, so one front serves several agents with their own ids on their proposals.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { McpHttpAgent } from '../contracts/mcp';

/** Tokens start with this, so a secret scanner (and a person) can tell what leaked. */
export const TOKEN_PREFIX = 'ajt_';

/** A fresh token: 256 random bits, base64url. Printed once by `agent-judge mcp token`; never stored in clear. */
export function newAgentToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** The digest the policy stores: SHA-256 of the token's UTF-8 bytes, lowercase hex. */
export function tokenSha256(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The token of an `Authorization: Bearer <token>` header, or null (absent, another scheme, malformed). */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  const m = /^Bearer +([A-Za-z0-9._~+/=-]{1,512})\s*$/i.exec(header);
  return m ? m[1]! : null;
}

/**
 * The agent whose token this is, or null. Every listed digest is compared in constant time, and all of them
 * always, so the time taken says nothing about which (or whether a) digest was close.
 */
export function agentForToken(agents: readonly McpHttpAgent[], token: string): string | null {
  const presented = Buffer.from(tokenSha256(token), 'hex');
  let found: string | null = null;
  for (const a of agents) {
    const listed = Buffer.from(a.tokenSha256, 'hex');
    if (listed.length === presented.length && timingSafeEqual(listed, presented) && found === null) found = a.agent;
  }
  return found;
}
