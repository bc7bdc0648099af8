/**
 * The per-user state folder (`$AGENT_JUDGE_HOME`, default `~/.agent-judge`): a running `agent-judge dev` records
 * where it is (`dev.json`: Temporal, the gate, the inbox), so `hook install` in any project and commands in any
 * terminal find the running system without copying paths; the gate keeps hooked projects' tokens there. The default
 * folder's name is one of the hook roots' protected components (spec.hooks.files.protect), so no agent reads or
 * writes it through a judged tool even when its project is the home folder. Node built-ins only: the hook client and
 * `status` read it on their fast paths.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** What a running `agent-judge dev` records about itself. */
export interface RunningDev {
  pid: number;
  started_at: string;
  /** The folder dev runs in (its `.agent-judge` holds the database and the dev token). */
  cwd: string;
  temporal: { address: string; namespace: string; ui_url: string | null };
  /** The resident gate for hooks: its base URL, the file of the token that registers projects, its audit log. */
  gate: { url: string; token_file: string | null; audit_log: string } | null;
  /** The inbox: its URL and the folder its invites are kept in (`inbox invite` in any terminal writes there). */
  inbox: { url: string; state_dir: string } | null;
  /** `/metrics` URL, or null. */
  metrics: string | null;
  /** The workflow task queue. */
  task_queue: string;
}

const RECORD = 'dev.json';

/** The per-user state folder. */
export function userStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const set = env.AGENT_JUDGE_HOME?.trim();
  return resolve(set ? set : join(env.HOME?.trim() || homedir(), '.agent-judge'));
}

/** The folder, made private to its owner when it is made. */
export function ensureUserStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = userStateDir(env);
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }
  return dir;
}

/** Records `dev` (replacing a record another dev left). */
export function writeRunningDev(record: RunningDev, env: NodeJS.ProcessEnv = process.env): string {
  const file = join(ensureUserStateDir(env), RECORD);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  return file;
}

/** Removes the record if it is this process's (another dev started since keeps its own). */
export function clearRunningDev(env: NodeJS.ProcessEnv = process.env): void {
  const file = join(userStateDir(env), RECORD);
  const mine = readRecord(file);
  if (mine?.pid === process.pid) {
    try {
      writeFileSync(file, '');
    } catch {
      // best effort: a reader ignores a record whose process is gone
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readRecord(file: string): RunningDev | null {
  try {
    const st = statSync(file);
    // Only a record its owner wrote and no one else could change counts: an address planted by another user would
    // send hooks and decisions elsewhere.
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) return null;
    if ((st.mode & 0o022) !== 0) return null;
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as RunningDev;
    if (typeof parsed?.pid !== 'number' || typeof parsed.temporal?.address !== 'string') return null;
    return parsed;
  } catch {
    return null;
  }
}

/** The running dev's record, or null when none runs (no record, or its process is gone). */
export function readRunningDev(env: NodeJS.ProcessEnv = process.env): RunningDev | null {
  const record = readRecord(join(userStateDir(env), RECORD));
  return record && alive(record.pid) ? record : null;
}

/** Where {@link readRunningDev} looks (for messages). */
export function runningDevFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(userStateDir(env), RECORD);
}
