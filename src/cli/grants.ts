/**
 * `agent-judge grants create | list | show | revoke` (docs/grants.md), and the grant half of `decide --grant-for`.
 * Thin: grants live in src/client/grants.ts and their workflow.
 */
import type { Command } from 'commander';
import type { Client } from '@temporalio/client';
import { BadInputError } from '../contracts/errors';
import { codeFieldsOf, type GrantDefinition, type GrantStatus } from '../contracts/grant';
import { loadEnv } from '../config/env';
import type { KeyFile } from '../contracts/identity';
import {
  createGrant,
  grantDefinitionFor,
  grantSessionFor,
  grantStatus,
  listGrants,
  revokeGrant,
  type ListedGrant,
} from '../client/grants';
import { getStatus } from '../client/proposals';
import { signGrant } from '../identity/sign-grant';
import { loadKeyFile } from '../identity/keys';
import { describeGrantScope } from '../contracts/grant-scope';
import { refuseUnpinnedCode } from '../policy/grants';
import { DEFAULT_TASK_QUEUES } from '../names';
import { printJson } from './io';
import { parseDuration, withClient } from './shared';

/** The flags that shape a grant, as `grants create` and `decide --grant-for` spell them. */
export interface GrantFlags {
  for: string;
  /** The workflow task queue the grant runs on (the workers'). */
  taskQueue?: string;
  uses?: string;
  same?: string;
  under?: string;
  /** Scope the grant to this runtime session id. */
  session?: string;
  /** Scope the grant to the proposal's own session (it must carry a `session_id`). */
  thisSession?: boolean;
  reason?: string;
}

function usesFrom(value: string | undefined, flag: string): number {
  if (value === undefined) return 20;
  if (!/^\d+$/.test(value.trim())) throw new BadInputError(`${flag}: expected a whole number of uses, got ${value}`);
  return Number(value);
}

/**
 * The rule that a grant never widens code (src/policy/grants.ts), asked before anything is signed or decided, with
 * the grant bounds of `AGENT_JUDGE_POLICY` when it is set and the defaults otherwise (no action type may leave its
 * code free). Why here too: `decide --grant-*` sends the decision first, and a grant the workflow then refuses would
 * leave an approval the approver meant only with its grant. The grant workflow checks again with the workers' policy.
 */
async function refuseWideningCode(definition: GrantDefinition): Promise<void> {
  const path = loadEnv().AGENT_JUDGE_POLICY;
  // The policy file is read only for a grant on a code-carrying type (`grants list` and the rest never load it).
  if (definition.match.kind === 'identical' || codeFieldsOf(definition.action_type).length === 0) return;
  const settings = path
    ? (await (await import('../policy/load')).loadPolicy({ path })).spec.grants
    : { allowUnpinnedCode: [] };
  const refused = refuseUnpinnedCode(settings, definition);
  if (refused)
    throw new BadInputError(
      `${refused.reason}; nothing was signed or decided` +
        (path ? '' : ' (AGENT_JUDGE_POLICY is not set: checked with the default spec.grants)'),
    );
}

/** A grant made from proposal `id`, checked and described, ready to sign and start with {@link startGrant}. */
export interface PreparedGrant {
  definition: GrantDefinition;
  /** What it covers in words ({@link describeGrantScope}), printed before it is signed. */
  coverage: string;
}

/**
 * The grant of calls like proposal `id` (same agent and action type): the identical action, or with `same`/`under`
 * a narrowed pattern. Refused before anything is signed when it would widen code. Prints nothing.
 */
export async function prepareGrant(
  client: Client,
  id: string,
  approver: string,
  flags: GrantFlags,
  names: { for: string; uses: string },
): Promise<PreparedGrant> {
  const status = await getStatus(client, id);
  const same = flags.same
    ?.split(',')
    .map((f) => f.trim())
    .filter((f) => f.length > 0);
  const patterned = (same?.length ?? 0) > 0 || flags.under !== undefined;
  const definition = grantDefinitionFor(status.proposal, {
    approver,
    lifetimeMs: parseDuration(flags.for, names.for),
    maxUses: usesFrom(flags.uses, names.uses),
    scope: patterned ? { kind: 'pattern', same, under: flags.under } : { kind: 'identical' },
    sessionId: grantSessionFor(status.proposal, { explicit: flags.session, thisSession: flags.thisSession }),
    reason: flags.reason,
    originWorkflowId: status.workflow_id,
  });
  await refuseWideningCode(definition);
  return { definition, coverage: describeGrantScope(definition, status.proposal) };
}

/** Signs the prepared grant with `key` when given and starts it; the grant workflow's status. */
export async function startGrant(
  client: Client,
  prepared: PreparedGrant,
  key: KeyFile | undefined,
  taskQueue: string | undefined,
): Promise<GrantStatus> {
  const { definition } = prepared;
  return createGrant(client, key ? signGrant(definition, key) : { definition }, { taskQueue });
}

/** One line per grant for a terminal. */
function grantLine(g: ListedGrant): string {
  const what =
    g.match.kind === 'identical'
      ? 'the identical action'
      : [
          ...Object.entries(g.match.target ?? {}).map(([k, v]) => `target.${k}=${JSON.stringify(v)}`),
          ...Object.entries(g.match.parameters ?? {}).map(([k, v]) => `parameters.${k}=${JSON.stringify(v)}`),
          ...(g.match.under ? [`under ${g.match.under}`] : []),
        ].join(', ');
  const session = g.session_id !== undefined ? ` (session ${g.session_id})` : '';
  return (
    `${g.grant_id}  ${g.running ? 'live ' : 'ended'}  ${g.agent_id}${session} ${g.action_type}: ${what}; ` +
    `up to ${g.max_uses} uses until ${g.expires_at} (by ${g.approver})`
  );
}

export function registerGrantCommands(program: Command): void {
  const grants = program
    .command('grants')
    .description('scoped grants: approve calls like one proposal for a while or a number of uses (docs/grants.md)');

  grants
    .command('create')
    .description('grant calls like an existing proposal: the identical action, or a narrowed pattern')
    .argument('<proposal_id>', 'the proposal whose agent and action the grant covers')
    .requiredOption('--approver <id>', 'your approver id, as listed in the policy')
    .requiredOption('--for <duration>', 'how long the grant lives (30m, 8h; at most spec.grants.maxLifetime)')
    .option('--uses <n>', 'how many proposals it may approve (default 20; at most spec.grants.maxUses)')
    .option(
      '--same <fields>',
      'a pattern instead of the identical action: comma-separated fields that must stay equal, such as ' +
        'parameters.command,target.cwd',
    )
    .option('--under <dir>', 'a pattern: every path of the target (path, cwd, paths) must lie in this directory')
    .option('--session <id>', "only calls of this runtime session (a coding agent's session id)")
    .option('--this-session', "only calls of the proposal's own session (the proposal must carry a session_id)")
    .option('--reason <text>', 'why (shown in the audit trail)')
    .option('--key <file>', 'sign the grant with your key file (required when the policy lists a key for you)')
    .option('--task-queue <name>', 'workflow task queue of the workers', DEFAULT_TASK_QUEUES.workflow)
    .option('--json', 'print the status as JSON')
    .action(async (id: string, opts: GrantFlags & { approver: string; key?: string; json?: boolean }, cmd: Command) => {
      const key = opts.key ? await loadKeyFile(opts.key) : undefined;
      await withClient(cmd, async (client) => {
        const prepared = await prepareGrant(client, id, opts.approver, opts, { for: '--for', uses: '--uses' });
        process.stderr.write(`the grant covers: ${prepared.coverage}\n`);
        const status = await startGrant(client, prepared, key, opts.taskQueue);
        if (opts.json) printJson(status);
        else
          process.stdout.write(
            `grant ${status.definition.grant_id} is live: up to ${status.definition.max_uses} uses until ` +
              `${status.definition.expires_at}` +
              (status.definition.session_id !== undefined ? `, in session ${status.definition.session_id} only` : '') +
              '\n' +
              `revoke it with: agent-judge grants revoke ${status.definition.grant_id}\n`,
          );
      });
    });

  grants
    .command('list')
    .description('live grants, newest first (--all: ended ones too)')
    .option('--all', 'also grants that expired, were used up, revoked or refused')
    .option('--task-queue <name>', 'workflow task queue of the workers', DEFAULT_TASK_QUEUES.workflow)
    .option('--json', 'print JSON')
    .action(async (opts: { all?: boolean; json?: boolean; taskQueue: string }, cmd: Command) => {
      await withClient(cmd, async (client) => {
        const rows = await listGrants(client, { all: opts.all, taskQueue: opts.taskQueue });
        if (opts.json) printJson(rows);
        else if (rows.length === 0) process.stdout.write(opts.all ? 'no grants\n' : 'no live grants\n');
        else process.stdout.write(rows.map(grantLine).join('\n') + '\n');
      });
    });

  grants
    .command('show')
    .description('one grant: what it covers, its state, every use and the proposal it approved')
    .argument('<grant_id>')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      await withClient(cmd, async (client) => printJson(await grantStatus(client, id)));
    });

  grants
    .command('revoke')
    .description('end a live grant now: no proposal is approved by it any more')
    .argument('<grant_id>')
    .requiredOption('--by <id>', 'who revokes it (audit trail)')
    .option('--reason <text>', 'why')
    .action(async (id: string, opts: { by: string; reason?: string }, cmd: Command) => {
      await withClient(cmd, async (client) => {
        const status = await revokeGrant(client, id, { by: opts.by, ...(opts.reason ? { reason: opts.reason } : {}) });
        process.stdout.write(
          `grant ${status.definition.grant_id} revoked after ${status.uses.length} of ` +
            `${status.definition.max_uses} uses\n`,
        );
      });
    });
}
