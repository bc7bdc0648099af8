import { Command, Help } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, COMMAND_GROUPS, commandNameOf } from '../../src/cli/main';

describe('agent-judge lazy command registration', () => {
  it('lists every command with the usage and description its module registers', async () => {
    const help = new Help();
    for (const group of COMMAND_GROUPS) {
      const program = new Command('agent-judge');
      (await group.load())(program);
      const registered = program.commands.map((c) => ({ term: help.subcommandTerm(c), description: c.description() }));
      expect(registered).toEqual(group.commands);
    }
  });

  it('finds the command past the global options, and the command `help` asks about', () => {
    const argv = (...args: string[]) => ['node', 'agent-judge', ...args];
    expect(commandNameOf(argv('--address', 'localhost:7233', '--namespace', 'x', 'status', 'id'))).toBe('status');
    expect(commandNameOf(argv('--address=localhost:7233', 'propose', '-'))).toBe('propose');
    expect(commandNameOf(argv('help', 'circles'))).toBe('circles');
    expect(commandNameOf(argv('--help'))).toBeUndefined();
  });

  it('registers the real command, with its options, for the command being run', async () => {
    const program = await buildProgram(['node', 'agent-judge', 'propose', 'x.json']);
    const propose = program.commands.find((c) => c.name() === 'propose');
    expect(propose?.options.map((o) => o.long)).toContain('--wait');
    expect(program.commands.map((c) => c.name())).not.toContain('dev');
  });
});
