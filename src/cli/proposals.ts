import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Argument, type Command, Option } from 'commander';
import { BadInputError } from '../contracts/errors';
import { parseEditFlag, type ActionEdit } from '../contracts/action-edit';
import { clarify, decide, submitAndWait, submitProposal } from '../client/proposals';
import { SessionIdSchema } from '../contracts/proposal';
import { DEFAULT_TASK_QUEUES } from '../names';
import { printJson, readJsonInput } from './io';
import { chooseOutputFormat, renderOutcome, renderSubmitted } from './outcome-text';
import type { ProposalOutcome } from '../contracts/status';
import { loadKeyFile } from '../identity/keys';
import { createLogger, sinceWindowMs, withClient } from './shared';
import { loadEnv } from '../config/env';
import { warnIfPolicyNotInForce } from './policy-check';
import { DEFAULT_POLICY_PATH, loadPolicy } from '../policy/load';
import { inboxUrl } from '../config/inbox-url';

/** `--json` and `--format`: the short form on a terminal, the full JSON for scripts (src/cli/outcome-text.ts). */
export function addOutputOptions(cmd: Command): Command {
  return cmd
    .option('--json', 'print the full JSON (the default when stdout is not a terminal)')
    .addOption(
      new Option('--format <format>', 'human (a short summary; the default on a terminal) or json').choices([
        'human',
        'json',
      ]),
    );
}

interface OutputFlags {
  json?: boolean;
  format?: string;
}

/** Prints an outcome the way `flags` and the terminal ask. */
export function printOutcome(outcome: ProposalOutcome, flags: OutputFlags): void {
  if (chooseOutputFormat(flags, process.stdout.isTTY) === 'json') printJson(outcome);
  else process.stdout.write(renderOutcome(outcome, inboxUrl()));
}

/** `--edit` flags and `--edit-file`, as one list of edits (undefined when there are none). */
async function readEdits(flags: string[] | undefined, file: string | undefined): Promise<ActionEdit[] | undefined> {
  const edits = (flags ?? []).map(parseEditFlag);
  if (file !== undefined) {
    const input = await readJsonInput(file, '--edit-file');
    if (Array.isArray(input)) edits.push(...(input as ActionEdit[]));
    else if (input !== null && typeof input === 'object')
      edits.push(...Object.entries(input as Record<string, unknown>).map(([path, value]) => ({ path, value })));
    else throw new BadInputError('--edit-file: expected [{"path": ..., "value": ...}] or {"path": value}');
  }
  return edits.length > 0 ? edits : undefined;
}

export function registerProposalCommands(program: Command): void {
  addOutputOptions(
    program
      .command('propose')
      .description('submit a proposal (JSON file, or - for stdin); prints {"proposal_id","workflow_id"}')
      .argument('<file>', 'proposal JSON file, or - to read stdin')
      .option('--wait', 'wait until the proposal is finished or waiting on someone, and print the outcome')
      .addOption(new Option('--task-queue <name>', 'workflow task queue').default(DEFAULT_TASK_QUEUES.workflow)),
  ).action(async (file: string, opts: { wait?: boolean; taskQueue: string } & OutputFlags, cmd: Command) => {
    const format = chooseOutputFormat(opts, process.stdout.isTTY);
    const input = await readJsonInput(file, 'proposal');
    await withClient(cmd, async (client) => {
      await warnIfPolicyNotInForce(client, opts.taskQueue);
      // The per-agent limits of AGENT_JUDGE_POLICY, else (unset, or a file the warning above said is ignored) the
      // default policy's: a refusal exits 4, naming the limit and when it resets.
      const policy = await loadPolicy().catch(() => loadPolicy({ path: DEFAULT_POLICY_PATH }));
      const options = { taskQueue: opts.taskQueue, limits: { policy } };
      if (opts.wait) printOutcome(await submitAndWait(client, input, options), { format });
      else {
        const submitted = await submitProposal(client, input, options);
        if (format === 'json') printJson(submitted);
        else process.stdout.write(renderSubmitted(submitted));
      }
    });
  });

  addOutputOptions(
    program
      .command('clarify')
      .description(
        'answer a CLARIFY with more evidence, a narrower scope or a better justification; prints the new outcome',
      )
      .argument('<proposal_id>', 'the proposal_id (or the workflow id)')
      .argument('<file>', 'clarification JSON file, or - to read stdin'),
  ).action(async (id: string, file: string, opts: OutputFlags, cmd: Command) => {
    chooseOutputFormat(opts, process.stdout.isTTY);
    const input = await readJsonInput(file, 'clarification');
    await withClient(cmd, async (client) => {
      await warnIfPolicyNotInForce(client, DEFAULT_TASK_QUEUES.workflow);
      printOutcome(await clarify(client, id, input), opts);
    });
  });

  addOutputOptions(
    program
      .command('decide')
      .description('approve or reject an escalated proposal as an approver; prints the new outcome')
      .argument('<proposal_id>', 'the proposal_id (or the workflow id)')
      .addArgument(new Argument('<decision>', 'approve or reject').choices(['approve', 'reject']))
      .requiredOption('--approver <id>', 'your approver id, as listed in the policy')
      .option('--reason <text>', 'why (shown in the audit trail)')
      .option('--key <file>', 'sign the decision with your key file (required when the policy lists a key for you)')
      .option(
        '--edit <path=value>',
        'with approve: narrow the action first (repeatable), e.g. scope_claim.max_lines=40 or ' +
          'parameters.body=Thanks; the value is JSON when it parses, else text; only narrowing edits pass ' +
          '(docs/edits.md)',
        (v: string, all: string[] = []) => [...all, v],
      )
      .option('--edit-file <file>', 'with approve: edits as JSON, [{"path": ..., "value": ...}] or {"path": value}')
      .option(
        '--grant-for <duration>',
        'with approve: also grant calls like this one for this long (docs/grants.md; at most spec.grants.maxLifetime)',
      )
      .option('--grant-uses <n>', 'with --grant-for: how many calls the grant may approve (default 20)')
      .option(
        '--grant-same <fields>',
        'with --grant-for: a pattern of fields that must stay equal (parameters.command)',
      )
      .option('--grant-under <dir>', 'with --grant-for: a pattern: every path of the target must lie in this directory')
      .option('--grant-session <id>', "with --grant-for: only calls of this runtime session (a coding agent's session)")
      .option(
        '--grant-this-session',
        "with --grant-for: only calls of this proposal's own session (it must carry a session_id)",
      )
      .option(
        '--task-queue <name>',
        'with --grant-for: the workflow task queue of the workers',
        DEFAULT_TASK_QUEUES.workflow,
      ),
  ).action(
    async (
      id: string,
      decision: string,
      opts: {
        approver: string;
        reason?: string;
        key?: string;
        edit?: string[];
        editFile?: string;
        grantFor?: string;
        grantUses?: string;
        grantSame?: string;
        grantUnder?: string;
        grantSession?: string;
        grantThisSession?: boolean;
        taskQueue: string;
      } & OutputFlags,
      cmd: Command,
    ) => {
      chooseOutputFormat(opts, process.stdout.isTTY);
      const granting = opts.grantFor !== undefined;
      if (
        !granting &&
        ((opts.grantUses ?? opts.grantSame ?? opts.grantUnder ?? opts.grantSession) !== undefined ||
          opts.grantThisSession)
      )
        throw new BadInputError(
          '--grant-uses, --grant-same, --grant-under, --grant-session and --grant-this-session need ' +
            '--grant-for <duration>',
        );
      if (opts.grantSession !== undefined && !SessionIdSchema.safeParse(opts.grantSession).success)
        throw new BadInputError(
          `--grant-session: expected a session id of 1-256 characters of letters, digits, . _ : -, ` +
            `got ${JSON.stringify(opts.grantSession.slice(0, 300))}`,
        );
      if (granting && decision !== 'approve') throw new BadInputError('--grant-for: only an approval can grant');
      const edits = await readEdits(opts.edit, opts.editFile);
      if (edits && decision !== 'approve') throw new BadInputError('--edit: only an approval carries edits');
      if (edits && granting)
        throw new BadInputError('--edit and --grant-for: a grant covers calls like the proposal, not an edited one');
      const key = opts.key ? await loadKeyFile(opts.key) : undefined;
      await withClient(cmd, async (client) => {
        await warnIfPolicyNotInForce(client, DEFAULT_TASK_QUEUES.workflow);
        // Before the decision: a grant that cannot be made as asked (its session, a pattern that would widen code)
        // must not leave an approval without its grant; and the approver reads what it will cover before it is signed.
        const grants = granting ? await import('./grants') : undefined;
        const flags = {
          for: opts.grantFor!,
          uses: opts.grantUses,
          same: opts.grantSame,
          under: opts.grantUnder,
          session: opts.grantSession,
          thisSession: opts.grantThisSession,
          taskQueue: opts.taskQueue,
          reason: opts.reason,
        };
        const prepared = await grants?.prepareGrant(client, id, opts.approver, flags, {
          for: '--grant-for',
          uses: '--grant-uses',
        });
        if (prepared) process.stderr.write(`the grant covers: ${prepared.coverage}\n`);
        printOutcome(
          await decide(
            client,
            id,
            { decision, approver: opts.approver, reason: opts.reason, via: 'cli', ...(edits ? { edits } : {}) },
            { key },
          ),
          opts,
        );
        if (!grants || !prepared) return;
        const grant = await grants.startGrant(client, prepared, key, opts.taskQueue);
        process.stderr.write(
          `grant ${grant.definition.grant_id} is live: up to ${grant.definition.max_uses} calls like this one until ` +
            `${grant.definition.expires_at} (agent-judge grants revoke ${grant.definition.grant_id})\n`,
        );
      });
    },
  );

  const audit = program.command('audit').description('read the audit trail (workflow histories)');
  const archiveOption = () =>
    new Option(
      '--archive <dir>',
      'the history archive (spec.audit.archive.dir) to read besides the server ' +
        `(default: ${DEFAULT_ARCHIVE_DIR} when it exists)`,
    );
  audit
    .command('replay')
    .description('replay every closed proposal against the current workflow code; exits 1 on any nondeterminism')
    .option('--since <duration>', 'only proposals started within this window', '7d')
    .addOption(archiveOption())
    .action(async (opts: { since: string; archive?: string }, cmd: Command) => {
      const sinceMs = sinceWindowMs(opts.since);
      const archiveDir = archiveDirOption(opts.archive);
      const { replayProposals } = await import('../audit');
      // The replaying worker's and Temporal core's log lines go to stderr through our logger: stdout is the JSON.
      const { installQuietRuntime } = await import('./server-telemetry');
      installQuietRuntime(createLogger(), loadEnv());
      await withClient(cmd, async (client) => {
        const summary = await replayProposals(client, {
          sinceMs,
          archiveDir,
          onProgress: (n) => process.stderr.isTTY && process.stderr.write(`\rreplayed ${n}`),
        });
        if (process.stderr.isTTY) process.stderr.write('\n');
        printJson(summary);
        if (summary.nondeterministic > 0 || summary.failed > 0) process.exitCode = 1;
      });
    });
  audit
    .command('export')
    .description(
      'one JSON line per proposal run with every verdict and decision (server and archive, each run once), ' +
        'then the MCP pass-through calls and the hook calls decided without a proposal',
    )
    .option('--since <duration>', 'only proposals started within this window', '7d')
    .addOption(archiveOption())
    .option(
      '--state-dir <dir>',
      'where agent-judge mcp and the hook gate keep their logs (mcp-audit.jsonl, hooks-audit.jsonl)',
      '.agent-judge',
    )
    .action(async (opts: { since: string; archive?: string; stateDir: string }, cmd: Command) => {
      const sinceMs = sinceWindowMs(opts.since);
      const archiveDir = archiveDirOption(opts.archive);
      const { exportAudit } = await import('../audit');
      const { hooksAuditLogPath, mcpAuditLogPath, readPassThroughLog } = await import('../audit/mcp-log');
      // Read (and verify) the chained logs first: a broken chain fails the export before anything is printed. The
      // hook gate's calls decided without a proposal follow the MCP proxy's pass-through calls.
      const passThrough = [
        ...readPassThroughLog(mcpAuditLogPath(opts.stateDir), { sinceMs }),
        ...readPassThroughLog(hooksAuditLogPath(opts.stateDir), { sinceMs }),
      ];
      await withClient(cmd, async (client) => {
        for await (const record of exportAudit(client, { sinceMs, archiveDir }))
          process.stdout.write(`${JSON.stringify(record)}\n`);
      });
      for (const record of passThrough) process.stdout.write(`${JSON.stringify(record)}\n`);
    });
  audit
    .command('verify')
    .description("check the archive's hash chain and every archived file; prints entries checked and the last hash")
    .option('--archive <dir>', 'the history archive (spec.audit.archive.dir)', DEFAULT_ARCHIVE_DIR)
    .action(async (opts: { archive: string }) => {
      const dir = resolve(opts.archive);
      // Loaded here: the archive module pulls in protobuf code the other commands never need.
      const { archiveIndexPath, verifyArchive } = await import('../audit/archive');
      const index = archiveIndexPath(dir);
      if (!existsSync(index)) throw new BadInputError(`--archive: no archive index at ${index}`);
      const verdict = verifyArchive(dir);
      printJson({ archive: dir, ...verdict });
      if (!verdict.ok) {
        const who = verdict.workflow_id ? ` (${verdict.workflow_id} run ${verdict.run_id ?? '?'})` : '';
        process.stderr.write(
          `agent-judge: archive ${dir}: entry ${verdict.line} of index.jsonl${who} is broken: ${verdict.reason}\n`,
        );
        process.exitCode = 1;
      }
    });
}

/** The default archive folder, as the default policy names it (relative to the working directory). */
const DEFAULT_ARCHIVE_DIR = '.agent-judge/archive';

/** `--archive`: a named folder must exist; without the flag, the default folder is read when there is one. */
function archiveDirOption(value: string | undefined): string | undefined {
  const dir = resolve(value ?? DEFAULT_ARCHIVE_DIR);
  if (existsSync(dir)) return dir;
  if (value !== undefined) throw new BadInputError(`--archive: ${dir} does not exist`);
  return undefined;
}
