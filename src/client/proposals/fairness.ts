/**
 * The fairness key a proposal's workflow is started with: its agent id. Temporal's task-queue fairness (issue 38;
 * docs/gate.md "Fairness between agents") dispatches backlogged tasks of different keys in turn, so one agent's flood
 * waits behind its own tasks instead of in front of another agent's. The key is set once, on the start: the
 * workflow's activities (the rules, the judge, the executor, the notices) inherit it, on whatever task queue they run.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { toHex, utf8 } from '../../contracts/encoding';

/** Temporal refuses a longer fairness key (`Priority.fairnessKey`, 64 bytes). */
export const FAIRNESS_KEY_MAX_BYTES = 64;

/**
 * `agentId` itself when it fits in {@link FAIRNESS_KEY_MAX_BYTES} bytes (what an operator reads in the task queue's
 * stats), else its first 31 characters, `#` and 32 hex characters of its SHA-256: 64 bytes, the same for the same
 * agent on every client, and never equal to a short id (an agent id has no `#`). Agent ids are ASCII (AgentIdSchema),
 * so characters are bytes; the byte check holds for anything else given.
 */
export function fairnessKeyFor(agentId: string): string {
  if (utf8(agentId).length <= FAIRNESS_KEY_MAX_BYTES) return agentId;
  const digest = toHex(sha256(utf8(agentId))).slice(0, 32);
  // Cut by code point and keep whole ASCII: a non-ASCII id would only reach here through a caller that skipped
  // validation; its readable part is dropped rather than cut through a character.
  const readable = /^[\x20-\x7e]*$/.test(agentId) ? agentId.slice(0, 31) : '';
  return `${readable}#${digest}`;
}
