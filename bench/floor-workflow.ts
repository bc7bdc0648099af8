/** The engine's floor, on the same server as the bench: an empty workflow, and one that runs one no-op activity. */
import { proxyActivities } from '@temporalio/workflow';

const { noop } = proxyActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '10s' });

/** Start, one workflow task, complete: what any proposal pays at least. */
export function emptyWorkflow(): Promise<void> {
  return Promise.resolve();
}

/** Empty workflow + one activity on the same task queue: the floor for a proposal that executes. */
export async function floorWorkflow(): Promise<void> {
  await noop();
}
