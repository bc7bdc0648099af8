import { type Command, Option } from 'commander';
import { getOutcomeOverRpc } from '../client/status-rpc';
import { temporalTargetLazily } from '../client/target';
import { inboxUrl } from '../config/inbox-url';
import { printJson } from './io';
import { chooseOutputFormat, renderOutcome } from './outcome-text';

/**
 * `status <proposal_id>` on its own: the command people and scripts run most, so it loads neither the SDK client nor
 * the other commands (src/client/status-rpc.ts says why and what stays the same).
 */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('print the outcome of a proposal')
    .argument('<proposal_id>', 'the proposal_id (or the workflow id)')
    .option('--json', 'print the full JSON (the default when stdout is not a terminal)')
    .addOption(
      new Option('--format <format>', 'human (a short summary; the default on a terminal) or json').choices([
        'human',
        'json',
      ]),
    )
    .action(async (id: string, opts: { json?: boolean; format?: string }, cmd: Command) => {
      const format = chooseOutputFormat(opts, process.stdout.isTTY);
      const { address, namespace } = cmd.optsWithGlobals<{ address?: string; namespace?: string }>();
      const outcome = await getOutcomeOverRpc(await temporalTargetLazily({ address, namespace }), id);
      if (format === 'json') printJson(outcome);
      else process.stdout.write(renderOutcome(outcome, inboxUrl()));
    });
}
