/** The engine's floor: a workflow that runs one no-op activity, on the same server as the bench. */
import { proxyActivities } from '@temporalio/workflow';

const { noop } = proxyActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '10s' });

export async function floorWorkflow(): Promise<void> {
  await noop();
}
