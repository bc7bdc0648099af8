/**
 * The MCP proxy's pass-through (no-judge) calls, which have no workflow, and the agent messages it dropped unrelayed
 * (src/mcp/admission.ts): a hash-chained log under the state folder (`<state-dir>/mcp-audit.jsonl`, written by
 * `agent-judge mcp`), merged into `audit export` next to the proposals.
 */
import { join } from 'node:path';
import type { Logger } from '../contracts/logger';
import type { McpDropReason as DropReason } from '../contracts/mcp-drop-reasons';
import { appendChained, ChainError, readChain, verifyChain } from './chain';

/** Where `agent-judge mcp --state-dir DIR` keeps its pass-through log. */
export function mcpAuditLogPath(stateDir: string): string {
  return join(stateDir, 'mcp-audit.jsonl');
}

/**
 * Where the hook gate (`agent-judge dev`, `hook serve`) keeps the hook calls it decided without a proposal (refused by
 * a rule, or let run by one): the same chained form, read by `list --hooks` and `audit export`.
 */
export function hooksAuditLogPath(stateDir: string): string {
  return join(stateDir, 'hooks-audit.jsonl');
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

/** An agent message the proxy dropped instead of relaying it upstream, as its audit line records it. */
export interface DroppedRecord {
  kind: 'mcp_dropped';
  agent: string;
  server: string;
  reason: DropReason;
  /** The message's method (a batch: its methods, comma-separated), cut to 200 characters; null for a response. */
  method: string | null;
  /** Whether the agent got an error answer (a request with an id) or nothing (a notification, a response). */
  answered: boolean;
  at: string;
}

/** Appends one dropped-message line; a failure to write is logged, never thrown (the message stays dropped). */
export function appendDropped(file: string, record: DroppedRecord, logger: Logger): Promise<void> {
  return appendChained(file, { ...record, method: record.method?.slice(0, 200) ?? null }).then(
    () => undefined,
    (err: Error) => logger.error({ file, err: err.message }, 'could not append to the audit log'),
  );
}
