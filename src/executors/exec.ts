import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { ExecutionRefusedError } from '../contracts/errors';
import { confine } from '../guards/paths';
import { checkExec } from '../guards/rules';
import { proposalFor, type Executor } from './types';

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
  '--no-pager',
];
// External diff drivers and textconv filters (diff.external, diff.<driver>.command|textconv via
// .gitattributes) run programs too. They are switched off per call: an empty `diff.external`
// would make git try to run "" and fail every diff that has changes.
const GIT_NO_DIFF_PROGRAMS = ['--no-ext-diff', '--no-textconv'];

/**
 * exec: an allowlisted argv, never through a shell, with a timeout, a confined working directory,
 * a minimal environment and bounded captured output.
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
    if (finding) throw new ExecutionRefusedError(finding.reason);

    const [program, ...args] = parameters.command;
    if (program === undefined) throw new ExecutionRefusedError('empty command');
    const [sub, ...rest] = args;
    const argv =
      program === 'git'
        ? [...GIT_SAFETY, ...(sub === 'diff' || sub === 'log' ? [sub, ...GIT_NO_DIFF_PROGRAMS, ...rest] : args)]
        : args;
    const timeoutMs = Math.min(parameters.timeout_ms ?? exec.defaultTimeoutMs, 3_600_000);
    const max = exec.maxOutputBytes;

    return new Promise((resolve, reject) => {
      const child = spawn(program, argv, {
        cwd: confined.real,
        shell: false,
        // No system or user git config: only the repository's own, whose metadata agents cannot write.
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          LANG: 'C.UTF-8',
          HOME: confined.real,
          GIT_TERMINAL_PROMPT: '0',
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_CONFIG_GLOBAL: '/dev/null',
        },
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
            cwd: confined.real,
            stdout: text('stdout'),
            stderr: text('stderr'),
            truncated,
          },
          error: code === 0 ? undefined : timedOut ? `timed out after ${timeoutMs} ms` : `exit code ${code ?? signal}`,
        });
      });
    });
  },
};
