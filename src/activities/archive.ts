/**
 * The archive activity: copies closed proposal histories into the archive folder before the namespace's retention
 * deletes them. It runs only on the archive task queue, which only a worker with the `archive` role polls: the
 * folder is local to that worker's host, so one host (or a shared volume) holds the whole archive.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Context } from '@temporalio/activity';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { historyToJSON, type History } from '@temporalio/common/lib/proto-utils.js';
import { optionalTsToMs } from '@temporalio/common/lib/time.js';
import type { Logger } from '../contracts/logger';
import {
  archiveIndexPath,
  historyFileFor,
  isRunGone,
  readArchiveIndex,
  sha256,
  sha256OfFile,
  writeHistoryFile,
  type ArchiveRecord,
} from '../audit/archive';
import { appendChained } from '../audit/chain';
import { AuditDamagedError } from '../contracts/errors';
import { PROPOSAL_WORKFLOW_TYPE } from '../names';

/** Histories fetched at once: round trips overlap, memory stays bounded. */
const FETCH_CONCURRENCY = 8;

export interface ArchiveBatchInput {
  /** At most this many runs are archived by one call; the workflow calls again while `remaining`. */
  limit: number;
}

export interface ArchiveBatchResult {
  /** Runs written and indexed by this call. */
  archived: number;
  /** Of those, runs whose file was already there (a crash between file and index): checked, then indexed. */
  rechecked: number;
  /** Closed runs that vanished between the listing and the fetch (retention, or deleted). */
  missing: number;
  /** More closed runs wait: the batch limit was reached. */
  remaining: boolean;
  /** Entries in the index after this call. */
  indexed: number;
}

/** The archive activities as the archive workflow sees them (imported as a type). */
export interface ArchiveActivities {
  archiveClosedHistories(input: ArchiveBatchInput): Promise<ArchiveBatchResult>;
}

export interface ArchiveDeps {
  client: Client;
  /** The archive folder (absolute). */
  dir: string;
  /** Only proposals started on this workflow task queue: one deployment's proposals, one archive. */
  workflowTaskQueue: string;
  logger: Logger;
  /** Tests only: runs after a history file is complete and before its index entry is written (a crash point). */
  afterFileWritten?: (record: ArchiveRecord) => void | Promise<void>;
}

function timestampIso(ts: Parameters<typeof optionalTsToMs>[0]): string | null {
  const ms = optionalTsToMs(ts);
  return ms === undefined ? null : new Date(ms).toISOString();
}

export function createArchiveActivities(deps: ArchiveDeps): ArchiveActivities {
  const indexFile = archiveIndexPath(deps.dir);
  const query =
    `WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}' AND ExecutionStatus != 'Running'` +
    ` AND TaskQueue = '${deps.workflowTaskQueue.replace(/'/g, "\\'")}'`;

  // One archive run at a time in this process: two overlapping runs (a manual trigger during a scheduled one, a
  // retry while a timed-out attempt still runs) would otherwise both copy the same run and index it twice.
  let queue: Promise<unknown> = Promise.resolve();
  const serially = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = queue.then(fn, fn);
    queue = next.catch(() => undefined);
    return next;
  };

  return {
    archiveClosedHistories: (input) => serially(() => archiveBatch(input)),
  };

  /** Writes one run's file (or checks the one a crash left), then its index entry: in that order, always. */
  async function archiveOne(wf: WorkflowExecutionInfo, history: History, result: ArchiveBatchResult): Promise<void> {
    const json = historyToJSON(history);
    const events = history.events ?? [];
    const rel = historyFileFor(wf.workflowId, wf.runId);
    const file = join(deps.dir, rel);
    const hash = sha256(json);
    // A file already there and not indexed: a crash came between the file and its entry. Check it against the
    // server's history; a file that differs (cut short, or altered meanwhile) is written again.
    const present = existsSync(file);
    if (!present || sha256OfFile(file) !== hash) writeHistoryFile(deps.dir, rel, json);
    if (present) result.rechecked += 1;
    const record: ArchiveRecord = {
      workflow_id: wf.workflowId,
      run_id: wf.runId,
      workflow_type: wf.type,
      file: rel,
      sha256: hash,
      bytes: Buffer.byteLength(json),
      events: events.length,
      start_time: timestampIso(events[0]?.eventTime) ?? wf.startTime.toISOString(),
      close_time: timestampIso(events.at(-1)?.eventTime) ?? wf.closeTime?.toISOString() ?? null,
    };
    await deps.afterFileWritten?.(record);
    // A broken last line (ChainError, AuditDamaged) fails at once; a lock held for the whole wait is retried.
    await appendChained(indexFile, record);
    result.archived += 1;
    result.indexed += 1;
  }

  async function archiveBatch({ limit }: ArchiveBatchInput): Promise<ArchiveBatchResult> {
    let entries;
    try {
      entries = readArchiveIndex(deps.dir);
    } catch (err) {
      // A damaged index must be looked at by a person; appending after it would hide the damage.
      throw new AuditDamagedError((err as Error).message, { cause: err });
    }
    const archived = new Set(entries.map((e) => e.record.run_id));
    const result: ArchiveBatchResult = {
      archived: 0,
      rechecked: 0,
      missing: 0,
      remaining: false,
      indexed: entries.length,
    };
    const pending: WorkflowExecutionInfo[] = [];
    for await (const wf of deps.client.workflow.list({ query })) {
      // Throttled by the SDK; keeps a long listing of already archived runs alive too.
      Context.current().heartbeat({ archived: result.archived });
      if (archived.has(wf.runId)) continue;
      if (pending.length >= limit) {
        result.remaining = true;
        break;
      }
      pending.push(wf);
    }
    // Histories are fetched a few at a time (a round trip each); files and index entries are written one by one.
    for (let at = 0; at < pending.length; at += FETCH_CONCURRENCY) {
      const chunk = pending.slice(at, at + FETCH_CONCURRENCY);
      const histories = await Promise.all(
        chunk.map((wf) =>
          deps.client.workflow
            .getHandle(wf.workflowId, wf.runId)
            .fetchHistory()
            .catch((err: unknown) => {
              if (isRunGone(err)) return null;
              throw err;
            }),
        ),
      );
      for (const [i, wf] of chunk.entries()) {
        const history = histories[i];
        if (!history) {
          result.missing += 1;
          continue;
        }
        await archiveOne(wf, history, result);
        archived.add(wf.runId);
        Context.current().heartbeat({ archived: result.archived });
      }
    }
    if (result.archived > 0) {
      deps.logger.info(
        { archived: result.archived, rechecked: result.rechecked, dir: deps.dir },
        'archived closed proposal histories',
      );
    }
    return result;
  }
}
