/**
 * An append-only, hash-chained JSON Lines log: the tamper-evident form of every audit record kept
 * outside Temporal's histories (the history archive, the MCP proxy's pass-through calls).
 *
 * Each line is one {@link ChainEntry}: its `hash` is the SHA-256 of the canonical JSON of
 * `{ seq, at, prev, record }`, and `prev` is the previous line's hash (64 zeros for the first), so
 * changing, removing or reordering any line breaks every hash after it. {@link verifyChain} finds
 * the first broken line. The chain proves order and integrity, not authorship: anyone who can
 * rewrite the whole file can rebuild the chain, so keep a copy of the last hash elsewhere (the
 * `audit verify` output prints it) when that matters.
 *
 * Writers in several processes may share one file: an append takes a lock (a directory created
 * next to the file, which `mkdir` makes atomic), reads the last line, and writes the new line
 * with one `write` under `O_APPEND`. The lock names its holder (pid and host); a waiter on the same
 * host takes over at once a lock whose holder is no longer running (an MCP client killed its proxy
 * mid-append), and any lock older than {@link STALE_LOCK_MS}. One takeover runs at a time (a second
 * lock directory), so two waiters never both remove a lock and both think they hold the next one.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { canonicalJson } from '../contracts/canonical-json';
import { AgentJudgeError, AuditDamagedError } from '../contracts/errors';

/** One line of a chained log. */
export interface ChainEntry<T = unknown> {
  /** 1 for the first line, then one more per line. */
  seq: number;
  /** When the line was appended (ISO 8601, UTC). */
  at: string;
  /** The previous line's `hash`; {@link GENESIS} for the first line. */
  prev: string;
  /** SHA-256 (hex) of `canonicalJson({ seq, at, prev, record })`. */
  hash: string;
  record: T;
}

/** The `prev` of the first line. */
export const GENESIS = '0'.repeat(64);
/** A lock directory older than this is taken over: its writer died holding it. */
export const STALE_LOCK_MS = 30_000;
/** How long an append waits for the lock before failing. */
const LOCK_WAIT_MS = 10_000;
/** A takeover lock older than this is removed: a takeover takes microseconds. */
const STALE_TAKEOVER_MS = 5_000;
/** The file inside a lock directory that names its holder. */
const OWNER_FILE = 'owner.json';

/** Raised when a log cannot be appended to or read because a line is broken. Never retried. */
export class ChainError extends AuditDamagedError {
  constructor(
    message: string,
    readonly file: string,
    readonly line?: number,
  ) {
    super(message);
  }
}

/** Raised when another writer held the lock for the whole wait: nothing is damaged, and a retry can succeed. */
export class ChainLockTimeoutError extends AgentJudgeError {
  constructor(
    message: string,
    readonly file: string,
  ) {
    super(message);
  }
}

/** The hash a line must carry. */
export function entryHash(entry: Pick<ChainEntry, 'seq' | 'at' | 'prev' | 'record'>): string {
  const { seq, at, prev, record } = entry;
  return createHash('sha256').update(canonicalJson({ seq, at, prev, record })).digest('hex');
}

/** The last complete line of a file, read from its end (records are small; the file may be large). */
function lastLine(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return undefined;
    let chunk = 4096;
    for (;;) {
      const start = Math.max(0, size - chunk);
      const buf = Buffer.alloc(size - start);
      readSync(fd, buf, 0, buf.length, start);
      const text = buf.toString('utf8');
      if (!text.endsWith('\n')) {
        throw new ChainError(
          `${file}: the last line is incomplete (a write was cut off); run \`agent-judge audit verify\``,
          file,
        );
      }
      const body = text.slice(0, -1);
      const nl = body.lastIndexOf('\n');
      if (nl >= 0) return body.slice(nl + 1);
      if (start === 0) return body;
      chunk *= 4;
    }
  } finally {
    closeSync(fd);
  }
}

/** Whether the lock's holder is a process on this host that no longer runs (never true for a lock being created). */
function holderGone(lock: string): boolean {
  let owner: { pid?: unknown; host?: unknown };
  try {
    owner = JSON.parse(readFileSync(join(lock, OWNER_FILE), 'utf8')) as typeof owner;
  } catch {
    return false; // not written yet (the holder is between mkdir and write), or already released
  }
  if (owner.host !== hostname() || !Number.isInteger(owner.pid) || owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid as number, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function ageOf(dir: string): number | undefined {
  try {
    return Date.now() - statSync(dir).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Removes a lock whose holder is gone or which is stale; returns whether it did. One process at a time does this. */
function takeOver(lock: string): boolean {
  const takeover = `${lock}.takeover`;
  try {
    mkdirSync(takeover);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if ((ageOf(takeover) ?? 0) > STALE_TAKEOVER_MS) rmSync(takeover, { recursive: true, force: true });
    return false;
  }
  try {
    // Checked again under the takeover lock: another waiter may have taken over and a new holder come since.
    const age = ageOf(lock);
    if (age === undefined) return true;
    if (!holderGone(lock) && age <= STALE_LOCK_MS) return false;
    rmSync(lock, { recursive: true, force: true });
    return true;
  } finally {
    rmSync(takeover, { recursive: true, force: true });
  }
}

async function withLock<T>(file: string, fn: () => T): Promise<T> {
  const lock = `${file}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      try {
        writeFileSync(join(lock, OWNER_FILE), JSON.stringify({ pid: process.pid, host: hostname() }));
      } catch (err) {
        rmSync(lock, { recursive: true, force: true });
        throw err;
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = ageOf(lock);
      if (age === undefined) continue; // released between mkdir and stat
      if ((holderGone(lock) || age > STALE_LOCK_MS) && takeOver(lock)) continue;
      if (Date.now() > deadline)
        throw new ChainLockTimeoutError(`${file}: could not take the lock ${lock} within ${LOCK_WAIT_MS} ms`, file);
      await sleep(5 + Math.random() * 20);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Appends one record and returns the line written. Refuses (throws {@link ChainError}) when the
 * last line is incomplete or unreadable: appending after damage would hide it.
 */
export async function appendChained<T>(file: string, record: T, now: Date = new Date()): Promise<ChainEntry<T>> {
  mkdirSync(dirname(file), { recursive: true });
  return withLock(file, () => {
    const last = lastLine(file);
    let seq = 1;
    let prev = GENESIS;
    if (last !== undefined) {
      let parsed: ChainEntry;
      try {
        parsed = JSON.parse(last) as ChainEntry;
      } catch {
        throw new ChainError(`${file}: the last line is not JSON; run \`agent-judge audit verify\``, file);
      }
      if (!Number.isInteger(parsed.seq) || typeof parsed.hash !== 'string') {
        throw new ChainError(`${file}: the last line is not a chain entry; run \`agent-judge audit verify\``, file);
      }
      seq = parsed.seq + 1;
      prev = parsed.hash;
    }
    const at = now.toISOString();
    const entry: ChainEntry<T> = { seq, at, prev, hash: entryHash({ seq, at, prev, record }), record };
    const fd = openSync(file, 'a', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(entry)}\n`);
    } finally {
      closeSync(fd);
    }
    return entry;
  });
}

/** Every entry of a log, in order (an absent file is an empty log). Does not check hashes: see {@link verifyChain}. */
export function readChain<T = unknown>(file: string): Array<ChainEntry<T>> {
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, 'utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line, i) => {
    try {
      return JSON.parse(line) as ChainEntry<T>;
    } catch {
      throw new ChainError(`${file}:${i + 1}: not JSON`, file, i + 1);
    }
  });
}

export type ChainVerdict =
  | { ok: true; entries: number; lastHash: string }
  | { ok: false; entries: number; line: number; reason: string };

/**
 * Checks every line: JSON, consecutive `seq`, `prev` equal to the previous hash, `hash` equal to
 * the recomputed one. Returns the first broken line (1-based) and why.
 */
export function verifyChain(file: string): ChainVerdict {
  if (!existsSync(file)) return { ok: true, entries: 0, lastHash: GENESIS };
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  const complete = lines.at(-1) === '';
  if (complete) lines.pop();
  let prev = GENESIS;
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    if (!complete && i === lines.length - 1) return { ok: false, entries: i, line: n, reason: 'incomplete last line' };
    let e: ChainEntry;
    try {
      e = JSON.parse(lines[i]!) as ChainEntry;
    } catch {
      return { ok: false, entries: i, line: n, reason: 'not JSON' };
    }
    if (e.seq !== n) return { ok: false, entries: i, line: n, reason: `seq is ${String(e.seq)}, expected ${n}` };
    if (e.prev !== prev) return { ok: false, entries: i, line: n, reason: 'prev does not match the previous hash' };
    if (e.hash !== entryHash(e)) return { ok: false, entries: i, line: n, reason: 'hash does not match the content' };
    prev = e.hash;
  }
  return { ok: true, entries: lines.length, lastHash: prev };
}
