import { type Command, Option } from 'commander';
import { BadInputError } from '../contracts/errors';
import { listProposalsOverRpc } from '../client/status-rpc';
import { temporalTargetLazily } from '../client/target';
import { printJson } from './io';
import { chooseOutputFormat } from './outcome-text';
import { sinceWindowMs } from './since';

/**
 * `list` on its own, like `status`: it reads visibility over the read-only gRPC path (src/client/status-rpc.ts), so
 * it loads neither the SDK client nor the other proposal commands. The same query and rows as `listProposals`.
 */
export function registerListCommand(program: Command): void {
  program
    .command('list')
    .description('list proposals, newest first (a table on a terminal); --hooks: hook calls decided without a proposal')
    .option('--status <status>', 'executed|approved|rejected|awaiting_clarification|awaiting_human|failed|pending')
    .option('--since <duration>', 'only proposals started within this window, e.g. 24h')
    .option('--audit-flag', 'only proposals that raised the repeated-rejection audit flag')
    .option(
      '--hooks',
      'list the hook calls the gate decided without a proposal (refused by a rule, or let run by one) instead',
    )
    .option(
      '--state-dir <dir>',
      "with --hooks: the gate's state folder (hooks-audit.jsonl); default: the running dev's, else .agent-judge",
    )
    .option('--json', 'print the JSON (the default when stdout is not a terminal)')
    .addOption(
      new Option('--format <format>', 'human (a table; the default on a terminal) or json').choices(['human', 'json']),
    )
    .action(
      async (
        opts: {
          status?: string;
          since?: string;
          auditFlag?: boolean;
          hooks?: boolean;
          stateDir?: string;
          json?: boolean;
          format?: string;
        },
        cmd: Command,
      ) => {
        const format = chooseOutputFormat(opts, process.stdout.isTTY);
        const sinceMs = sinceWindowMs(opts.since);
        const { renderHookCallTable, renderProposalTable } = await import('./list-text');
        if (opts.hooks) {
          if (opts.status !== undefined || opts.auditFlag)
            throw new BadInputError('--hooks: hook calls have no status or audit flag; use --since to narrow them');
          const { hooksAuditLogPath, readPassThroughLog } = await import('../audit/mcp-log');
          // Newest first, as proposals are listed.
          const log = opts.stateDir !== undefined ? hooksAuditLogPath(opts.stateDir) : await runningGateAuditLog();
          const records = readPassThroughLog(log, { sinceMs }).reverse();
          if (format === 'json') printJson(records);
          else process.stdout.write(renderHookCallTable(records));
          return;
        }
        const { address, namespace } = cmd.optsWithGlobals<{ address?: string; namespace?: string }>();
        const target = await temporalTargetLazily({ address, namespace });
        const rows = await listProposalsOverRpc(target, { status: opts.status, sinceMs, auditFlag: opts.auditFlag });
        if (format === 'json') printJson(rows);
        else process.stdout.write(renderProposalTable(rows));
      },
    );
}

/** The hook log of the running `agent-judge dev`'s gate (its record in the user's state folder), else here. */
async function runningGateAuditLog(): Promise<string> {
  const { readRunningDev } = await import('../config/user-state');
  const { hooksAuditLogPath } = await import('../audit/mcp-log');
  return readRunningDev()?.gate?.audit_log ?? hooksAuditLogPath('.agent-judge');
}
