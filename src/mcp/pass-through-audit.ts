/**
 * The MCP proxy's own audit lines, appended to its hash-chained log one after the other, in call order: a pass-through
 * (no-judge) call, forwarded without a workflow, and a message from the agent that was dropped, not relayed.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { appendChained } from '../audit/chain';
import { appendDropped, type DroppedRecord } from '../audit/mcp-log';
import { canonicalJson } from '../contracts/canonical-json';
import type { Logger } from '../contracts/logger';
import { toHex, utf8 } from '../contracts/encoding';
import type { ToolCall } from './mapping';

/** A pass-through (no-judge) call as its audit line records it. */
export interface PassThroughRecord {
  kind: 'mcp_pass_through';
  agent: string;
  server: string;
  tool: string;
  tool_definition_hash: string;
  argument_digest: string;
  rule: string;
  outcome: 'ok' | 'tool_error' | 'upstream_failure' | 'cancelled';
  started_at: string;
  finished_at: string;
  upstream_ms: number;
}
/** The audit line of a pass-through call of `agent`, forwarded from `started` to `finished` (epoch ms). */
export function passThroughRecord(
  agent: string,
  call: ToolCall,
  rule: string,
  outcome: PassThroughRecord['outcome'],
  started: number,
  finished: number,
): PassThroughRecord {
  return {
    kind: 'mcp_pass_through',
    agent,
    server: call.server,
    tool: call.tool,
    tool_definition_hash: call.toolDefinitionHash,
    argument_digest: toHex(sha256(utf8(canonicalJson(call.arguments)))),
    rule,
    outcome,
    started_at: new Date(started).toISOString(),
    finished_at: new Date(finished).toISOString(),
    upstream_ms: finished - started,
  };
}

/** The proxy's audit lines, appended one after the other; a failed append is logged, never thrown. */
export class AuditQueue {
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly o: { auditLog: string; logger: Logger }) {}

  /** A dropped message's line, appended after every line before it. */
  dropped(record: DroppedRecord): void {
    this.queue = this.queue.then(() => appendDropped(this.o.auditLog, record, this.o.logger));
  }

  /** A pass-through call's line; resolves once it and every line before it are written. */
  passThrough(record: PassThroughRecord): Promise<void> {
    this.queue = this.queue.then(() =>
      appendChained(this.o.auditLog, record).then(
        () => undefined,
        (err: Error) =>
          this.o.logger.error({ file: this.o.auditLog, err: err.message }, 'could not append to the audit log'),
      ),
    );
    return this.queue;
  }

  /** Resolves once every audit line started so far is written. */
  flushed(): Promise<void> {
    return this.queue;
  }
}
