import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { childProcessPath } from '../config/env';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { ExecutionRefusedError } from '../contracts/errors';
import type { CompliancePolicy } from '../contracts/policy';
import {
  GIT_REPOSITORIES_FIELD,
  locateRepository,
  namedRepositoryFor,
  programConfigKeys,
  repositoryConfigFiles,
} from '../guards/git';
import { confine } from '../guards/paths';
import { checkExec } from '../guards/rules';
import { proposalFor, type ExecutionContext, type Executor, type ExecutorOutput } from './types';

// Repository config can make read-only git commands run programs (fsmonitor, hooks, pager);
// these override it for every allowlisted git call.
const GIT_SAFETY = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.pager=cat',
  '-c',
  'log.showSignature=false',
  '-c',
  'gpg.program=false',
  // A folder is a repository only when GIT_DIR names it: never one git finds by looking at the cwd.
  '-c',
  'safe.bareRepository=explicit',
  '--no-pager',
];
// External diff drivers and textconv filters (diff.external, diff.<driver>.command|textconv via
// .gitattributes) run programs too. They are switched off per call: an empty `diff.external`
// would make git try to run "" and fail every diff that has changes.
const GIT_NO_DIFF_PROGRAMS = ['--no-ext-diff', '--no-textconv'];

/** Environment of every git call: no system, global or user config, and a git directory given, never discovered. */
function gitEnvironment(gitDir: string, workTree: string | null, home: string): NodeJS.ProcessEnv {
  return {
    HOME: home,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_DIR: gitDir,
    ...(workTree !== null ? { GIT_WORK_TREE: workTree } : {}),
    // Discovery (a submodule's child git, which gets no GIT_DIR) never climbs above the repository.
    GIT_CEILING_DIRECTORIES: dirname(workTree ?? gitDir),
  };
}

const run = promisify(execFile);

/**
 * The named repository a git command in `cwd` reads, located, with its own config checked: refused when none is named
 * there, when it is not a repository, or when its config sets a key that runs a program.
 */
async function gitTarget(
  cwd: string,
  policy: CompliancePolicy,
  baseDir: string,
  home: string,
): Promise<{ gitDir: string; workTree: string | null }> {
  const repo = namedRepositoryFor(cwd, policy, baseDir);
  if (!repo) {
    throw new ExecutionRefusedError(
      `exec.git-repository: git runs only with its cwd inside a repository ${GIT_REPOSITORIES_FIELD} names; ` +
        `${cwd} is in none`,
    );
  }
  const where = locateRepository(repo);
  if ('refused' in where) throw new ExecutionRefusedError(`exec.git-repository: ${where.refused}`);
  const keys: string[] = [];
  for (const file of repositoryConfigFiles(where.gitDir)) {
    // `--file` reads that one file and follows no include; nothing in it runs while it is listed. Run outside any
    // repository (in the empty HOME, no discovery above it), so no repository setup reads anything else.
    const { stdout } = await run('git', ['config', '--file', file, '--null', '--list'], {
      cwd: home,
      env: {
        PATH: childProcessPath(),
        HOME: home,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_CEILING_DIRECTORIES: dirname(home),
      },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: unknown) => {
      throw new ExecutionRefusedError(
        `exec.git-config: repository ${repo.name}'s config ${file} cannot be read: ${(err as Error).message}`,
      );
    });
    for (const entry of stdout.split('\0')) if (entry !== '') keys.push(entry.split('\n')[0]!);
  }
  const risky = [...new Set(programConfigKeys(keys))];
  if (risky.length > 0) {
    throw new ExecutionRefusedError(
      `exec.git-config: repository ${repo.name} (${repo.path}) sets ${risky.slice(0, 5).join(', ')} ` +
        'in its own config, ' +
        'which can make git run a program; no git command runs there (docs/execution.md#git)',
    );
  }
  return where;
}

/** How one command runs: where, with which extra environment, for how long, keeping how much output. */
interface SpawnSpec {
  program: string;
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  maxOutputBytes: number;
  ctx: ExecutionContext;
}

function spawnCommand({
  program,
  argv,
  cwd,
  env,
  timeoutMs,
  maxOutputBytes: max,
  ctx,
}: SpawnSpec): Promise<ExecutorOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, argv, {
      cwd,
      shell: false,
      // A minimal environment; git's (gitEnvironment) names its repository and reads no system or user config.
      env: { PATH: childProcessPath(), LANG: 'C.UTF-8', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      signal: ctx.signal,
    });
    if (child.pid !== undefined) ctx.onStarted?.({ pid: child.pid });
    // Output is bounded in bytes across both streams; decoded once at the end so a multi-byte
    // character is never split between chunks.
    const chunks: Record<'stdout' | 'stderr', Buffer[]> = { stdout: [], stderr: [] };
    let used = 0;
    let truncated = false;
    const take = (which: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const room = max - used;
      if (chunk.length > room) truncated = true;
      if (room <= 0) return;
      const kept = chunk.subarray(0, room);
      chunks[which].push(kept);
      used += kept.length;
    };
    const text = (which: 'stdout' | 'stderr') =>
      new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks[which])).replace(/\uFFFD$/, '');
    child.stdout.on('data', take('stdout'));
    child.stderr.on('data', take('stderr'));
    child.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        resolve({ ok: false, error: `${program}: command not found` });
      else if (err.name === 'AbortError') reject(err);
      else resolve({ ok: false, error: err.message });
    });
    child.on('close', (code, signal) => {
      const timedOut = signal === 'SIGKILL' && code === null;
      resolve({
        ok: code === 0,
        output: {
          exit_code: code,
          signal,
          timed_out: timedOut,
          cwd,
          stdout: text('stdout'),
          stderr: text('stderr'),
          truncated,
        },
        error: code === 0 ? undefined : timedOut ? `timed out after ${timeoutMs} ms` : `exit code ${code ?? signal}`,
      });
    });
  });
}

/**
 * exec: an allowlisted argv, never through a shell, with a timeout, a confined working directory,
 * a minimal environment and bounded captured output. git runs only in a repository the policy names, pointed at it
 * explicitly, and not at all when that repository's config could make it run a program.
 */
export const execExecutor: Executor = {
  name: 'exec',
  async run(ctx) {
    const { parameters } = proposalFor(ctx, 'exec');
    const { exec } = ctx.policy.spec;
    const defaultCwd = exec.cwdRoots[0]!;
    await mkdir(defaultCwd, { recursive: true });
    const confined = confine(parameters.cwd ?? defaultCwd, exec.cwdRoots, ctx.baseDir);
    if (!confined)
      throw new ExecutionRefusedError(`cwd ${JSON.stringify(parameters.cwd)} is outside the allowed directories`);
    // Checked again here, against the directory the command really runs in.
    const finding = checkExec(parameters.command, ctx.policy, { cwd: confined.real, baseDir: ctx.baseDir });
    if (finding) throw new ExecutionRefusedError(`${finding.rule}: ${finding.reason}`);

    const [program, ...args] = parameters.command;
    if (program === undefined) throw new ExecutionRefusedError('empty command');
    const spec = {
      program,
      cwd: confined.real,
      timeoutMs: Math.min(parameters.timeout_ms ?? exec.defaultTimeoutMs, 3_600_000),
      maxOutputBytes: exec.maxOutputBytes,
      ctx,
    };
    if (program !== 'git') return spawnCommand({ ...spec, argv: args, env: { HOME: confined.real } });

    // A fresh, empty HOME: nothing there for git to read; removed afterwards.
    const home = await mkdtemp(join(tmpdir(), 'agent-judge-git-home-'));
    try {
      const target = await gitTarget(confined.real, ctx.policy, ctx.baseDir, home);
      const [sub, ...rest] = args;
      const argv = [
        ...GIT_SAFETY,
        ...(sub === 'diff' || sub === 'log' ? [sub, ...GIT_NO_DIFF_PROGRAMS, ...rest] : args),
      ];
      return await spawnCommand({ ...spec, argv, env: gitEnvironment(target.gitDir, target.workTree, home) });
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  },
};
