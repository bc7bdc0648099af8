/**
 * The SDK runtime's logger for test processes: warnings and errors as the SDK prints them, without the one warning
 * every activity-only worker logs by design ("No workflows registered, not polling for workflow tasks"), which
 * otherwise fills `npm test`'s output (`agent-judge dev` and `worker` drop it too, src/cli/server-run.ts).
 */
import { DefaultLogger, type LogEntry } from '@temporalio/worker';

const EXPECTED = 'No workflows registered';

export function testRuntimeLogger(): DefaultLogger {
  const print = new DefaultLogger('WARN');
  return new DefaultLogger('WARN', (entry: LogEntry) => {
    if (entry.message.startsWith(EXPECTED)) return;
    print.log(entry.level, entry.message, entry.meta);
  });
}
