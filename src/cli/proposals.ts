import { Argument, type Command, Option } from 'commander';
import { clarify, decide, listProposals, submitAndWait, submitProposal } from '../client/proposals';
import { DEFAULT_TASK_QUEUES } from '../names';
import { printJson, readJsonInput } from './io';
import { loadKeyFile } from '../identity/keys';
import { sinceWindowMs, withClient } from './shared';

export function registerProposalCommands(program: Command): void {
  program
    .command('propose')
    .description('submit a proposal (JSON file, or - for stdin); prints {"proposal_id","workflow_id"}')
    .argument('<file>', 'proposal JSON file, or - to read stdin')
    .option('--wait', 'wait until the proposal is finished or waiting on someone, and print the outcome')
    .addOption(new Option('--task-queue <name>', 'workflow task queue').default(DEFAULT_TASK_QUEUES.workflow))
    .action(async (file: string, opts: { wait?: boolean; taskQueue: string }, cmd: Command) => {
      const input = await readJsonInput(file, 'proposal');
      await withClient(cmd, async (client) => {
        const options = { taskQueue: opts.taskQueue };
        printJson(
          opts.wait ? await submitAndWait(client, input, options) : await submitProposal(client, input, options),
        );
      });
    });

  program
    .command('list')
    .description('list proposals, newest first')
    .option('--status <status>', 'executed|approved|rejected|awaiting_clarification|awaiting_human|failed|pending')
    .option('--since <duration>', 'only proposals started within this window, e.g. 24h')
    .option('--audit-flag', 'only proposals that raised the repeated-rejection audit flag')
    .action(async (opts: { status?: string; since?: string; auditFlag?: boolean }, cmd: Command) => {
      const sinceMs = sinceWindowMs(opts.since);
      await withClient(cmd, async (client) =>
        printJson(await listProposals(client, { status: opts.status, sinceMs, auditFlag: opts.auditFlag })),
      );
    });

  program
    .command('clarify')
    .description(
      'answer a CLARIFY with more evidence, a narrower scope or a better justification; prints the new outcome',
    )
    .argument('<proposal_id>', 'the proposal_id (or the workflow id)')
    .argument('<file>', 'clarification JSON file, or - to read stdin')
    .action(async (id: string, file: string, _opts: unknown, cmd: Command) => {
      const input = await readJsonInput(file, 'clarification');
      await withClient(cmd, async (client) => printJson(await clarify(client, id, input)));
    });

  program
    .command('decide')
    .description('approve or reject an escalated proposal as an approver; prints the new outcome')
    .argument('<proposal_id>', 'the proposal_id (or the workflow id)')
    .addArgument(new Argument('<decision>', 'approve or reject').choices(['approve', 'reject']))
    .requiredOption('--approver <id>', 'your approver id, as listed in the policy')
    .option('--reason <text>', 'why (shown in the audit trail)')
    .option('--key <file>', 'sign the decision with your key file (required when the policy lists a key for you)')
    .action(
      async (id: string, decision: string, opts: { approver: string; reason?: string; key?: string }, cmd: Command) => {
        const key = opts.key ? await loadKeyFile(opts.key) : undefined;
        await withClient(cmd, async (client) =>
          printJson(
            await decide(client, id, { decision, approver: opts.approver, reason: opts.reason, via: 'cli' }, { key }),
          ),
        );
      },
    );

  const audit = program.command('audit').description('read the audit trail (workflow histories)');
  audit
    .command('replay')
    .description('replay every closed proposal against the current workflow code; exits 1 on any nondeterminism')
    .option('--since <duration>', 'only proposals started within this window', '7d')
    .action(async (opts: { since: string }, cmd: Command) => {
      const sinceMs = sinceWindowMs(opts.since);
      const { replayProposals } = await import('../audit');
      await withClient(cmd, async (client) => {
        const summary = await replayProposals(client, {
          sinceMs,
          onProgress: (n) => process.stderr.isTTY && process.stderr.write(`\rreplayed ${n}`),
        });
        if (process.stderr.isTTY) process.stderr.write('\n');
        printJson(summary);
        if (summary.nondeterministic > 0 || summary.failed > 0) process.exitCode = 1;
      });
    });
  audit
    .command('export')
    .description('one JSON line per proposal with every verdict and decision, then the MCP pass-through calls')
    .option('--since <duration>', 'only proposals started within this window', '7d')
    .option('--state-dir <dir>', 'where agent-judge mcp keeps its pass-through log (mcp-audit.jsonl)', '.agent-judge')
    .action(async (opts: { since: string; stateDir: string }, cmd: Command) => {
      const sinceMs = sinceWindowMs(opts.since);
      const { exportAudit } = await import('../audit');
      const { mcpAuditLogPath, readPassThroughLog } = await import('../audit/mcp-log');
      // Read (and verify) the chained log first: a broken chain fails the export before anything is printed.
      const passThrough = readPassThroughLog(mcpAuditLogPath(opts.stateDir), { sinceMs });
      await withClient(cmd, async (client) => {
        for await (const record of exportAudit(client, { sinceMs }))
          process.stdout.write(`${JSON.stringify(record)}\n`);
      });
      for (const record of passThrough) process.stdout.write(`${JSON.stringify(record)}\n`);
    });
}
