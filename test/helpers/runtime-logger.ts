/**
 * The SDK runtime's logger for test processes: warnings and errors, one line each. Many tests fail a workflow or an
 * activity on purpose (a refused proposal_id, a timed-out judge), and the SDK's own format prints each with its whole
 * context and stack, some 40 lines: `npm test`'s output was ~1,900 lines of those. A line keeps what tells the
 * expected from the unexpected (level, message, workflow or activity type, task queue, the error's first line); a
 * failing test still shows its own assertion. The one warning every activity-only worker logs by design ("No
 * workflows registered, not polling for workflow tasks") is dropped, as `agent-judge dev` and `worker` drop it
 * (src/cli/server-telemetry.ts), and so are the failures agent-judge makes on purpose (see {@link deliberate}). The
 * tests that cause those assert the outcome they lead to; anything else (a plain error, a timeout, a retry) is still
 * printed.
 */
import { ApplicationFailure } from '@temporalio/common';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import { NON_RETRYABLE_FAILURE_TYPES } from '../../src/contracts/lifecycle';

const EXPECTED = 'No workflows registered';

/** One line for a log entry: level, message, where, and the error's first line. */
export function oneLineEntry(entry: LogEntry): string {
  const meta = (entry.meta ?? {}) as Record<string, unknown>;
  const where = [meta.workflowType ?? meta.activityType, meta.taskQueue].filter((v) => typeof v === 'string');
  const error = meta.error instanceof Error ? meta.error.message : typeof meta.error === 'string' ? meta.error : '';
  const firstLine = error.split('\n', 1)[0] ?? '';
  return (
    `[${entry.level}] ${entry.message}` +
    (where.length > 0 ? ` (${where.join(', ')})` : '') +
    (firstLine ? `: ${firstLine.slice(0, 200)}` : '')
  );
}

/**
 * True for a failure agent-judge raises on purpose: an activity's non-retryable ApplicationFailure of one of its own
 * refusal types; and any workflow's failure, which is that workflow's result, read by the test that started it (the
 * SDK hands it over from the workflow thread as a plain Error, its failure type lost, so it cannot be told apart).
 */
function deliberate(entry: LogEntry): boolean {
  if (entry.message === 'Workflow failed') return true;
  const error = (entry.meta as { error?: unknown } | undefined)?.error;
  return (
    error instanceof ApplicationFailure &&
    error.nonRetryable === true &&
    (NON_RETRYABLE_FAILURE_TYPES as readonly unknown[]).includes(error.type)
  );
}

/** `level`: ERROR for files whose workers fail and retry on purpose (activity-failures, judge-isolation). */
export function testRuntimeLogger(level: 'WARN' | 'ERROR' = 'WARN'): DefaultLogger {
  return new DefaultLogger(level, (entry: LogEntry) => {
    if (entry.message.startsWith(EXPECTED) || deliberate(entry)) return;
    process.stderr.write(`${oneLineEntry(entry)}\n`);
  });
}
