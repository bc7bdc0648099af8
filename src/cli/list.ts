import type { Command } from 'commander';
import { listProposalsOverRpc } from '../client/status-rpc';
import { temporalTargetLazily } from '../client/target';
import { printJson } from './io';
import { sinceWindowMs } from './since';

/**
 * `list` on its own, like `status`: it reads visibility over the read-only gRPC path (src/client/status-rpc.ts), so
 * it loads neither the SDK client nor the other proposal commands. The same query and rows as `listProposals`.
 */
export function registerListCommand(program: Command): void {
  program
    .command('list')
    .description('list proposals, newest first')
    .option('--status <status>', 'executed|approved|rejected|awaiting_clarification|awaiting_human|failed|pending')
    .option('--since <duration>', 'only proposals started within this window, e.g. 24h')
    .option('--audit-flag', 'only proposals that raised the repeated-rejection audit flag')
    .action(async (opts: { status?: string; since?: string; auditFlag?: boolean }, cmd: Command) => {
      const sinceMs = sinceWindowMs(opts.since);
      const { address, namespace } = cmd.optsWithGlobals<{ address?: string; namespace?: string }>();
      const target = await temporalTargetLazily({ address, namespace });
      printJson(await listProposalsOverRpc(target, { status: opts.status, sinceMs, auditFlag: opts.auditFlag }));
    });
}
