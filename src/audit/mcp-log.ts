/**
 * The MCP proxy's pass-through (no-judge) calls, which have no workflow: a hash-chained log under the state folder
 * (`<state-dir>/mcp-audit.jsonl`, written by `agent-judge mcp`), merged into `audit export` next to the proposals.
 */
import { join } from 'node:path';
import { ChainError, readChain, verifyChain } from './chain';

/** Where `agent-judge mcp --state-dir DIR` keeps its pass-through log. */
export function mcpAuditLogPath(stateDir: string): string {
  return join(stateDir, 'mcp-audit.jsonl');
}

/**
 * Every pass-through record since `sinceMs` ago, each with its chain position and hash; a broken chain is refused
 * naming the first bad line (tampered or truncated logs are never exported as if whole).
 */
export function readPassThroughLog(
  file: string,
  { sinceMs }: { sinceMs?: number } = {},
): Array<Record<string, unknown>> {
  const verdict = verifyChain(file);
  if (!verdict.ok) throw new ChainError(`${file}:${verdict.line}: ${verdict.reason}`, file, verdict.line);
  const from = sinceMs === undefined ? -Infinity : Date.now() - sinceMs;
  return readChain<Record<string, unknown>>(file)
    .filter((e) => Date.parse(e.at) >= from)
    .map((e) => ({ ...e.record, log: { file, seq: e.seq, hash: e.hash } }));
}
