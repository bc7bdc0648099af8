/**
 * What the performer of a caller-performed proposal (the MCP proxy) reports on it: `forwarding` leases the one
 * performance of the approved action (a second lease is refused, so an approved call is forwarded once across
 * processes), then one final outcome. `abandoned`: approved but never forwarded (the client cancelled or left).
 * `unknown`: performed, but the performer cannot tell whether it succeeded (Codex's post-tool report of a shell
 * command is its output text, with no exit code): never recorded as `ok` on a guess.
 */
import { z } from 'zod';

export const CALLER_OUTCOMES = ['ok', 'tool_error', 'upstream_failure', 'abandoned', 'unknown'] as const;
export type CallerFinalOutcome = (typeof CALLER_OUTCOMES)[number];

export const CallerOutcomeSchema = z.strictObject({
  outcome: z.enum(['forwarding', ...CALLER_OUTCOMES]),
  /** A short note (the upstream's error text, why it was abandoned). */
  detail: z.string().max(2000).optional(),
});
export type CallerOutcome = z.infer<typeof CallerOutcomeSchema>;

/** The caller's performance as the status shows it. */
export interface CallerRecord {
  /** When the approved call was leased for forwarding (null: not forwarded). */
  forwarded_at: string | null;
  outcome: CallerFinalOutcome | null;
  detail?: string;
  finished_at: string | null;
  /** Until when the approved call may be forwarded; after it, `abandoned` (or `upstream_failure` if forwarded). */
  deadline: string;
}
