/**
 * Runs `agent-judge circles ...` in-process the way src/cli/main.ts does (same global options,
 * same error-to-exit-code mapping), capturing stdout and stderr.
 */
import { Command, CommanderError } from 'commander';
import { registerCircleCommands } from '../../src/cli/circles';
import { describeError, exitCodeFor } from '../../src/cli/io';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (throws when it is not JSON). */
  /** stdout parsed as JSON; `T` names the shape the test expects (the assertions check it). */
  json: <T = unknown>() => T;
}

export async function runCircles(args: string[], target: { address: string; namespace: string }): Promise<CliRun> {
  const program = new Command('agent-judge')
    .option('--address <host:port>')
    .option('--namespace <name>')
    .exitOverride()
    .configureOutput({ writeOut: (s) => out.push(s), writeErr: (s) => err.push(s) });
  registerCircleCommands(program);
  for (const c of program.commands) applyExitOverride(c);
  const out: string[] = [];
  const err: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (chunk: string | Uint8Array) => {
    out.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  };
  const previousExit = process.exitCode;
  process.exitCode = undefined;
  let code: number;
  try {
    await program.parseAsync([
      'node',
      'agent-judge',
      '--address',
      target.address,
      '--namespace',
      target.namespace,
      ...args,
    ]);
    code = typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) code = e.exitCode === 0 ? 0 : 2;
    else {
      err.push(`${describeError(e)}\n`);
      code = exitCodeFor(e);
    }
  } finally {
    process.stdout.write = write;
    process.exitCode = previousExit;
  }
  const stdout = out.join('');
  return { code, stdout, stderr: err.join(''), json: <T>() => JSON.parse(stdout) as T };
}

function applyExitOverride(cmd: Command): void {
  cmd.exitOverride();
  cmd.configureOutput({ writeOut: () => {}, writeErr: () => {} });
  for (const c of cmd.commands) applyExitOverride(c);
}
