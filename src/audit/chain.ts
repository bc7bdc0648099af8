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
 * Writers in several processes may share one file: an append takes a lock (a file next to the log,
 * created whole by an atomic `link`), reads the last line, and writes the new line with one `write`
 * under `O_APPEND`. The lock names its holder (pid, start time and host); a waiter on the same host
 * takes over at once a lock whose holder is no longer running (an MCP client killed its proxy
 * mid-append), and any lock older than {@link STALE_LOCK_MS}. One takeover runs at a time (a second
 * lock directory), so two waiters never both remove a lock and both think they hold the next one.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  linkSync,
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
import { dirname } from 'node:path';
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
/** A lock older than this is taken over: its writer died holding it. */
export const STALE_LOCK_MS = 30_000;
/** How long an append waits for the lock before failing. */
const LOCK_WAIT_MS = 10_000;
/** A takeover lock older than this is removed: a takeover takes microseconds. */
const STALE_TAKEOVER_MS = 5_000;

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

/** What a lock file holds: who took it, and a token that is this acquisition's alone. */
interface LockOwner {
  pid?: unknown;
  host?: unknown;
  /** The holder's start time (field 22 of /proc/<pid>/stat): a pid given to another process is not taken for it. */
  start?: unknown;
  token?: unknown;
}

/** A process's state letter and start time from /proc; `'absent'` when it does not exist; undefined when unknown. */
function procStat(pid: number): { state: string; start: string } | 'absent' | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses; fields are counted after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const [state, start] = [fields[0], fields[19]];
    return state && start ? { state, start } : undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && existsSync('/proc/self/stat')) return 'absent';
    return undefined;
  }
}

const OWN_START = (() => {
  const own = procStat(process.pid);
  return typeof own === 'object' ? own.start : undefined;
})();

function readOwner(lock: string): LockOwner | undefined {
  try {
    return JSON.parse(readFileSync(lock, 'utf8')) as LockOwner;
  } catch {
    return undefined; // released since, or not a lock file this code wrote (then only its age counts)
  }
}

/**
 * Whether the lock's holder is a process on this host that no longer runs: gone, a zombie its parent has not
 * reaped yet, or a new process that was given the dead holder's pid.
 */
function holderGone(lock: string): boolean {
  const owner = readOwner(lock);
  if (!owner || owner.host !== hostname() || !Number.isInteger(owner.pid) || owner.pid === process.pid) return false;
  const pid = owner.pid as number;
  const stat = procStat(pid);
  if (stat === 'absent') return true;
  if (stat) {
    return stat.state === 'Z' || stat.state === 'X' || (owner.start !== undefined && owner.start !== stat.start);
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function ageOf(path: string): number | undefined {
  try {
    return Date.now() - statSync(path).mtimeMs;
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

/**
 * Takes the lock: the owner is written once to a file of this acquisition's own, then hard-linked to the lock's name
 * until a link succeeds. `link` is atomic and fails when the name exists, so the lock never exists without its owner
 * (a writer killed between creating a lock and naming itself in it left one that every waiter had to sit out).
 */
async function withLock<T>(file: string, fn: () => T): Promise<T> {
  const lock = `${file}.lock`;
  const token = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const mine = `${lock}.${token}`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  writeFileSync(mine, JSON.stringify({ pid: process.pid, host: hostname(), start: OWN_START, token }), { mode: 0o600 });
  try {
    while (!linked(mine, lock)) {
      const age = ageOf(lock);
      if (age === undefined) continue; // released between link and stat
      if ((holderGone(lock) || age > STALE_LOCK_MS) && takeOver(lock)) continue;
      if (Date.now() > deadline)
        throw new ChainLockTimeoutError(`${file}: could not take the lock ${lock} within ${LOCK_WAIT_MS} ms`, file);
      await sleep(5 + Math.random() * 20);
    }
  } finally {
    rmSync(mine, { force: true });
  }
  try {
    return fn();
  } finally {
    // Only this acquisition's lock is removed: one taken over as stale may already be another writer's.
    if (readOwner(lock)?.token === token) rmSync(lock, { force: true });
  }
}

/** Whether `from` was linked to the free name `to` (false when `to` exists). */
function linked(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return false;
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
