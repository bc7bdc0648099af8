/**
 * The history archive on disk: closed proposal histories kept beyond the namespace's retention (issue 11, "Keep
 * every decision"). Layout of an archive folder:
 *
 * - `histories/<workflow id>/<run id>.json`: one run's history as Temporal's own history JSON (`historyToJSON`), so
 *   it replays like a live one;
 * - `index.jsonl`: one hash-chained entry per archived run (src/audit/chain.ts), naming its file and the file's
 *   SHA-256. An entry is appended only after its file is complete, so the index never names a partial file.
 *
 * `audit verify` checks the chain and every file's hash against its entry.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { historyFromJSON, type History } from '@temporalio/common/lib/proto-utils.js';
import { AuditDamagedError } from '../contracts/errors';
import { readChain, verifyChain, type ChainEntry } from './chain';

/** What the index records about one archived run. */
export interface ArchiveRecord {
  workflow_id: string;
  run_id: string;
  workflow_type: string;
  /** Path of the history file, relative to the archive folder, with `/` separators. */
  file: string;
  /** SHA-256 (hex) of the file's bytes. */
  sha256: string;
  bytes: number;
  events: number;
  /** When the run started and closed (ISO 8601), from its history. */
  start_time: string;
  close_time: string | null;
}

/** The index file of an archive folder. */
export function archiveIndexPath(dir: string): string {
  return join(dir, 'index.jsonl');
}

/**
 * A file name for an id. Proposal workflow ids and run ids are filename-safe, but anyone who can reach the namespace
 * can start a run of the proposal type under any id (the workflow refuses it, and the failed run is still archived):
 * anything else is named by its SHA-256, so no id can climb out of the folder.
 */
function safeName(id: string): string {
  return /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/.test(id) && id !== '.' && id !== '..'
    ? id
    : `sha256-${sha256(Buffer.from(id, 'utf8'))}`;
}

/** Where a run's history goes inside the archive folder (relative, `/` separators). */
export function historyFileFor(workflowId: string, runId: string): string {
  return `histories/${safeName(workflowId)}/${safeName(runId)}.json`;
}

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** SHA-256 of a file, or null when it does not exist. */
export function sha256OfFile(file: string): string | null {
  return existsSync(file) ? sha256(readFileSync(file)) : null;
}

/**
 * Writes a history file completely or not at all: a temporary file, flushed to disk, then renamed into place. A
 * crash leaves at most a `.tmp` file, which the next run overwrites.
 */
export function writeHistoryFile(dir: string, rel: string, content: string): void {
  const file = join(dir, rel);
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/** Every index entry, in order (an archive without an index is empty). */
export function readArchiveIndex(dir: string): Array<ChainEntry<ArchiveRecord>> {
  return readChain<ArchiveRecord>(archiveIndexPath(dir));
}

export type ArchiveVerdict =
  | { ok: true; entries: number; last_hash: string; unindexed: string[] }
  | {
      ok: false;
      /** Entries checked and found sound before the broken one. */
      entries: number;
      /** 1-based line of the index. */
      line: number;
      workflow_id: string | null;
      run_id: string | null;
      reason: string;
    };

/**
 * Checks an archive: the index's chain (order and integrity of every entry), then each entry's file against the
 * SHA-256 its entry holds. Returns the first broken entry. History files no entry names are listed (a crash between
 * a file and its entry leaves one; the next archive run checks and indexes it): they are not evidence yet.
 */
export function verifyArchive(dir: string): ArchiveVerdict {
  const indexFile = archiveIndexPath(dir);
  const chain = verifyChain(indexFile);
  const lines = existsSync(indexFile) ? readFileSync(indexFile, 'utf8').split('\n') : [];
  const idsAt = (line: number): { workflow_id: string | null; run_id: string | null } => {
    try {
      const e = JSON.parse(lines[line - 1] ?? '') as ChainEntry<Partial<ArchiveRecord>>;
      return { workflow_id: e.record?.workflow_id ?? null, run_id: e.record?.run_id ?? null };
    } catch {
      return { workflow_id: null, run_id: null };
    }
  };
  if (!chain.ok)
    return { ok: false, entries: chain.entries, line: chain.line, ...idsAt(chain.line), reason: chain.reason };
  const entries = readArchiveIndex(dir);
  const indexed = new Set<string>();
  for (const [i, entry] of entries.entries()) {
    const r = entry.record;
    const where = { entries: i, line: i + 1, workflow_id: r.workflow_id ?? null, run_id: r.run_id ?? null };
    if (typeof r.file !== 'string' || r.file.split('/').includes('..') || r.file.startsWith('/')) {
      return { ok: false, ...where, reason: 'the entry names no file inside the archive' };
    }
    indexed.add(r.file);
    const actual = sha256OfFile(join(dir, r.file));
    if (actual === null) return { ok: false, ...where, reason: `${r.file} is missing` };
    if (actual !== r.sha256) return { ok: false, ...where, reason: `${r.file} does not match its SHA-256` };
  }
  const unindexed = listHistoryFiles(dir).filter((f) => !indexed.has(f));
  return { ok: true, entries: chain.entries, last_hash: chain.lastHash, unindexed };
}

/** Every history file in the archive (relative paths, `/` separators); temporary files are not. */
function listHistoryFiles(dir: string): string[] {
  const root = join(dir, 'histories');
  if (!existsSync(root)) return [];
  const out: string[] = [];
  for (const wf of readdirSync(root, { withFileTypes: true })) {
    if (!wf.isDirectory()) continue;
    for (const f of readdirSync(join(root, wf.name))) {
      if (f.endsWith('.json'))
        out.push(
          relative(dir, join(root, wf.name, f))
            .split(sep)
            .join('/'),
        );
    }
  }
  return out.sort();
}

/** Raised when an archived history does not match its index entry (tampered, or cut short). */
export class ArchiveIntegrityError extends AuditDamagedError {}

/** An archived run's history, checked against its entry's SHA-256 first. */
export function readArchivedHistory(dir: string, record: ArchiveRecord): History {
  const file = join(dir, record.file);
  if (!existsSync(file)) throw new ArchiveIntegrityError(`${record.file} is missing; run agent-judge audit verify`);
  const bytes = readFileSync(file);
  if (sha256(bytes) !== record.sha256) {
    throw new ArchiveIntegrityError(`${record.file} does not match its SHA-256; run agent-judge audit verify`);
  }
  return historyFromJSON(JSON.parse(bytes.toString('utf8')));
}

/**
 * The archived runs whose run id is not in `skip` (those the server still holds), each once, optionally only those
 * started after `sinceEpochMs`. The key is the run id: a run listed twice in the index counts once.
 */
export function archivedRuns(
  dir: string,
  { skip = new Set<string>(), sinceEpochMs }: { skip?: ReadonlySet<string>; sinceEpochMs?: number } = {},
): ArchiveRecord[] {
  const seen = new Set(skip);
  const out: ArchiveRecord[] = [];
  for (const { record } of readArchiveIndex(dir)) {
    if (seen.has(record.run_id)) continue;
    seen.add(record.run_id);
    if (sinceEpochMs !== undefined && Date.parse(record.start_time) <= sinceEpochMs) continue;
    out.push(record);
  }
  return out;
}

/**
 * Whether reading a run failed because the server no longer has it. `fetchHistory` surfaces the gRPC NOT_FOUND status
 * as it is, not as a `WorkflowNotFoundError`. A server with archival enabled (a real cluster, not `start-dev`) answers
 * INVALID_ARGUMENT instead, "... may have passed retention period".
 */
export function isRunGone(err: unknown): boolean {
  if (err instanceof Error && err.name === 'WorkflowNotFoundError') return true;
  const e = err as {
    code?: unknown;
    message?: unknown;
    details?: unknown;
    cause?: { code?: unknown; details?: unknown };
  } | null;
  const code = e?.code ?? e?.cause?.code;
  if (code === 5) return true;
  const text = [e?.message, e?.details, e?.cause?.details].filter((t) => typeof t === 'string').join(' ');
  return code === 3 && /passed retention period/i.test(text);
}
