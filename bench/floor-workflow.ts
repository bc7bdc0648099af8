/** The engine's floor: workflows that do nothing (and one no-op activity), on the same server as the bench. */
import { proxyActivities } from '@temporalio/workflow';

const { noop } = proxyActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '10s' });

/** Empty workflow + one activity on the same task queue: the floor for a proposal that executes. */
export async function floorWorkflow(): Promise<void> {
  await noop();
}

/** One workflow task and nothing else: the floor for a proposal decided in its first task. */
export async function emptyWorkflow(): Promise<void> {}
