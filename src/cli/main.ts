import { Command, CommanderError } from 'commander';
import { describeError, exitCodeFor } from './io';
import { registerProposalCommands } from './proposals';
import { registerServerCommands } from './server';
import { registerSchemaCommand } from './schema';
import { registerDiscordCommand } from './discord';
import { registerEvalCommand } from './eval';
import { registerCircleCommands } from './circles';

/**
 * The `agent-judge` command line: a thin layer over src/client/. Built with commander for real
 * `--help`, option parsing and subcommands instead of hand-rolled argv handling.
 */
export function buildProgram(): Command {
  const program = new Command('agent-judge')
    .description('Agents propose, a judge decides, people break ties; every step is a durable Temporal workflow.')
    .option('--address <host:port>', 'Temporal frontend (default: $TEMPORAL_ADDRESS or localhost:7233)')
    .option('--namespace <name>', 'Temporal namespace (default: $TEMPORAL_NAMESPACE or default)')
    .exitOverride();
  registerServerCommands(program);
  registerProposalCommands(program);
  registerDiscordCommand(program);
  registerEvalCommand(program);
  registerCircleCommands(program);
  registerSchemaCommand(program);
  return program;
}

/** Global options as the client library takes them. */
export function globalTarget(cmd: Command): { address?: string; namespace?: string } {
  const opts = cmd.optsWithGlobals() as { address?: string; namespace?: string };
  return { address: opts.address, namespace: opts.namespace };
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; usage errors are bad input.
      return err.exitCode === 0 ? 0 : 2;
    }
    process.stderr.write(`${describeError(err)}\n`);
    return exitCodeFor(err);
  }
}

const isEntry = process.argv[1] && /agent-judge(\.mjs)?$|cli[/\\]main\.ts$/.test(process.argv[1]);
if (isEntry) {
  const code = await main(process.argv);
  process.exitCode = code;
}
