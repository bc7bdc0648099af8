/**
 * The archive Schedule: a Temporal Schedule (visible in the Web UI under Schedules) that starts the archive workflow
 * every `spec.audit.archive.every`. `dev` and `worker` create it at start; creating it again updates it in place, so
 * any number of starts leave exactly one.
 */
import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import { durationMs, type CompliancePolicy } from '../contracts/policy';
import { archiveScheduleId, archiveTaskQueue, HISTORY_ARCHIVE_WORKFLOW_TYPE, type TaskQueues } from '../names';
import type { HistoryArchiveInput } from '../workflows/history-archive';

export interface ArchiveScheduleResult {
  scheduleId: string;
  /** False when it existed already (it was brought up to date). */
  created: boolean;
}

/** Creates the archive Schedule, or updates the existing one to this policy's interval and these task queues. */
export async function ensureArchiveSchedule(
  client: Client,
  { taskQueues, policy }: { taskQueues: TaskQueues; policy: CompliancePolicy },
): Promise<ArchiveScheduleResult> {
  const scheduleId = archiveScheduleId(taskQueues);
  const args: [HistoryArchiveInput] = [{ archiveTaskQueue: archiveTaskQueue(taskQueues) }];
  const spec = { intervals: [{ every: durationMs(policy.spec.audit.archive.every) }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: HISTORY_ARCHIVE_WORKFLOW_TYPE,
    workflowId: `${scheduleId}-run`,
    taskQueue: taskQueues.workflow,
    args,
  };
  // Skip: a run still copying when the next is due makes the next one unnecessary.
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: 86_400_000 };
  try {
    await client.schedule.create({ scheduleId, spec, action, policies });
    return { scheduleId, created: true };
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec, action, policies }));
  return { scheduleId, created: false };
}
