import type { Command } from 'commander';
import { getOutcomeOverRpc } from '../client/status-rpc';
import { temporalTargetLazily } from '../client/target';
import { printJson } from './io';

/**
 * `status <proposal_id>` on its own: the command people and scripts run most, so it loads neither the SDK client nor
 * the other commands (src/client/status-rpc.ts says why and what stays the same).
 */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('print the outcome of a proposal')
    .argument('<proposal_id>', 'the proposal_id (or the workflow id)')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { address, namespace } = cmd.optsWithGlobals<{ address?: string; namespace?: string }>();
      printJson(await getOutcomeOverRpc(await temporalTargetLazily({ address, namespace }), id));
    });
}
