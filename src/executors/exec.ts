import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { actionOf } from '../contracts/proposal';
import { ExecutionRefusedError } from '../errors';
import { confine } from '../judge/paths';
import { checkExec } from '../judge/rules';
import type { Executor } from './types';

// Repository config can make read-only git commands run programs (fsmonitor, hooks, external
// diff, pager); these override it for every allowlisted git call.
const GIT_SAFETY = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'diff.external=', '-c', 'core.pager=cat', '--no-pager'];

/**
 * exec: an allowlisted argv, never through a shell, with a timeout, a confined working directory,
 * a minimal environment and bounded captured output.
 */
export const execExecutor: Executor = {
  name: 'exec',
  async run(ctx) {
    const { parameters } = actionOf(ctx.proposal, 'exec');
    const { exec } = ctx.policy.spec;
    const finding = checkExec(parameters.command, ctx.policy);
    if (finding) throw new ExecutionRefusedError(finding.reason);
    const defaultCwd = exec.cwdRoots[0]!;
    await mkdir(defaultCwd, { recursive: true });
    const confined = confine(parameters.cwd ?? defaultCwd, exec.cwdRoots, ctx.baseDir);
    if (!confined) throw new ExecutionRefusedError(`cwd ${JSON.stringify(parameters.cwd)} is outside the allowed directories`);

    const [program, ...args] = parameters.command as [string, ...string[]];
    const argv = program === 'git' ? [...GIT_SAFETY, ...args] : args;
    const timeoutMs = Math.min(parameters.timeout_ms ?? exec.defaultTimeoutMs, 3_600_000);
    const max = exec.maxOutputBytes;

    return new Promise((resolve, reject) => {
      const child = spawn(program, argv, {
        cwd: confined.real,
        shell: false,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', GIT_TERMINAL_PROMPT: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
        signal: ctx.signal,
      });
      const out = { stdout: '', stderr: '', truncated: false };
      const take = (which: 'stdout' | 'stderr') => (chunk: Buffer) => {
        const room = max - out.stdout.length - out.stderr.length;
        if (room <= 0) {
          out.truncated = true;
          return;
        }
        const text = chunk.toString('utf8');
        if (text.length > room) out.truncated = true;
        out[which] += text.slice(0, room);
      };
      child.stdout.on('data', take('stdout'));
      child.stderr.on('data', take('stderr'));
      child.on('error', (err) => {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') resolve({ ok: false, error: `${program}: command not found` });
        else if (err.name === 'AbortError') reject(err);
        else resolve({ ok: false, error: err.message });
      });
      child.on('close', (code, signal) => {
        const timedOut = signal === 'SIGKILL' && code === null;
        resolve({
          ok: code === 0,
          output: { exit_code: code, signal, timed_out: timedOut, cwd: confined.real, ...out },
          error: code === 0 ? undefined : timedOut ? `timed out after ${timeoutMs} ms` : `exit code ${code ?? signal}`,
        });
      });
    });
  },
};
