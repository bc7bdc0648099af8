/**
 * The archive workflow, started by the archive Schedule (names.ts `archiveScheduleId`): copies every closed proposal
 * history not yet archived into the archive folder, in batches, and reports how many (its memo while it runs, its
 * result at the end). The copying is an activity on the archive task queue (src/activities/archive.ts).
 */
import { continueAsNew, proxyActivities, upsertMemo, workflowInfo } from '@temporalio/workflow';
import type { ArchiveActivities } from '../activities/archive';

export interface HistoryArchiveInput {
  /** The archive worker's task queue (`archiveTaskQueue(taskQueues)`). */
  archiveTaskQueue: string;
  /** Runs per activity call (default 200). */
  batchSize?: number;
  /** Carried across continue-as-new. */
  progress?: HistoryArchiveProgress;
}

/** How far a run got: the workflow's result and memo. */
export interface HistoryArchiveProgress {
  archived: number;
  rechecked: number;
  missing: number;
  /** Entries in the archive's index after the last batch. */
  indexed: number;
  batches: number;
}

export async function historyArchiveWorkflow(input: HistoryArchiveInput): Promise<HistoryArchiveProgress> {
  const { archiveClosedHistories } = proxyActivities<ArchiveActivities>({
    taskQueue: input.archiveTaskQueue,
    // Bounded: with no archive worker polling, the run fails after this and the Schedule's next run tries again.
    scheduleToCloseTimeout: '50m',
    startToCloseTimeout: '20m',
    // A crashed archive worker is noticed this fast; the retry resumes from the index.
    heartbeatTimeout: '1m',
    retry: { initialInterval: '2s', maximumInterval: '1m' },
  });
  const progress: HistoryArchiveProgress = input.progress ?? {
    archived: 0,
    rechecked: 0,
    missing: 0,
    indexed: 0,
    batches: 0,
  };
  for (;;) {
    const batch = await archiveClosedHistories({ limit: input.batchSize ?? 200 });
    progress.archived += batch.archived;
    progress.rechecked += batch.rechecked;
    progress.missing += batch.missing;
    progress.indexed = batch.indexed;
    progress.batches += 1;
    upsertMemo({ archived: progress.archived, indexed: progress.indexed });
    if (!batch.remaining) return progress;
    if (workflowInfo().continueAsNewSuggested) {
      return continueAsNew<typeof historyArchiveWorkflow>({ ...input, progress });
    }
  }
}
