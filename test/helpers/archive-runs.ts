/**
 * Archive steps the archive and replay system tests share: run the archive Schedule once and wait for its run, and
 * delete a run from the server as the namespace's retention would, waiting until the server no longer has it.
 */
import { inject } from 'vitest';
import { isRunGone } from '../../src/audit/archive';
import { archiveScheduleId } from '../../src/names';
import type { HistoryArchiveProgress } from '../../src/workflows/history-archive';
import type { TestSystem } from './system';

/** Triggers the Schedule and waits for the archive run it starts; returns the run's result and memo. */
export async function triggerArchiveAndWait(
  sys: TestSystem,
): Promise<HistoryArchiveProgress & { memo: Record<string, unknown> | undefined }> {
  const handle = sys.client.schedule.getHandle(archiveScheduleId(sys.taskQueues));
  const before = (await handle.describe()).info.recentActions.length;
  await handle.trigger();
  for (let i = 0; i < 200; i++) {
    const actions = (await handle.describe()).info.recentActions;
    if (actions.length > before) {
      const started = actions.at(-1)!.action.workflow;
      const wf = sys.client.workflow.getHandle(started.workflowId, started.firstExecutionRunId);
      const result = (await wf.result()) as HistoryArchiveProgress;
      return { ...result, memo: (await wf.describe()).memo };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the archive Schedule did not start a run');
}

/**
 * What the namespace's retention does once it ends. The server deletes asynchronously (a transfer task), which a
 * loaded CI machine has taken more than 20 s to run: wait up to 100 s, asking again every 10 s (a second request for a
 * run already gone answers NotFound, which is what we wait for).
 */
export async function deleteRunAndWait(sys: TestSystem, run: { workflowId: string; runId: string }): Promise<void> {
  const deadline = Date.now() + 100_000;
  let asked = 0;
  while (Date.now() < deadline) {
    if (Date.now() >= asked + 10_000) {
      asked = Date.now();
      try {
        await sys.client.workflowService.deleteWorkflowExecution({
          namespace: inject('temporalNamespace'),
          workflowExecution: { workflowId: run.workflowId, runId: run.runId },
        });
      } catch (err) {
        if (!isRunGone(err)) throw err;
      }
    }
    try {
      await sys.client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
    } catch (err) {
      if (isRunGone(err)) return;
      throw err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the deleted workflow is still there');
}
