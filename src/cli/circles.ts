/**
 * `agent-judge circles ...`: trust circles from the shell. A thin layer over
 * {@link CircleRegistryClient}; every command prints one JSON document on stdout, which is what
 * scripts read. Signing happens here, with the key file given, and never leaves this process.
 * Exit codes: 0 ok, 2 bad input, 3 KNOCK denied, 1 anything else (including registry refusals).
 */
import { Argument, type Command, Option } from 'commander';
import { CircleRegistryClient } from '../client/circles';
import { CIRCLE_REGISTRY_WORKFLOW_ID } from '../circles/names';
import { generateIdentity, loadKeyFile } from '../identity/keys';
import { trustCirclePrompt } from '../circles/prompt';
import { AmidSchema } from '../contracts/identity';
import { BadInputError } from '../contracts/errors';
import { DEFAULT_TASK_QUEUES } from '../names';
import { printJson } from './io';
import { parseSince, withClient } from './shared';

/** Exit code of `circles knock` when the registry denies the KNOCK. */
export const KNOCK_DENIED_EXIT_CODE = 3;

interface CircleGlobals {
  registryId: string;
  taskQueue: string;
  operatorKey?: string;
}

/** Runs `fn` with a registry client built from the global and `circles` options; always closes the connection. */
async function withRegistry<T>(cmd: Command, fn: (registry: CircleRegistryClient) => Promise<T>): Promise<T> {
  const opts = cmd.optsWithGlobals<CircleGlobals>();
  const operatorKey = opts.operatorKey ? await loadKeyFile(opts.operatorKey) : undefined;
  return withClient(cmd, (client) =>
    fn(new CircleRegistryClient({ client, workflowId: opts.registryId, taskQueue: opts.taskQueue, operatorKey })),
  );
}

function amidArg(value: string, what: string): string {
  const parsed = AmidSchema.safeParse(value);
  if (!parsed.success)
    throw new BadInputError(`${what}: expected an AMID such as amid:<40 hex characters>, got ${JSON.stringify(value)}`);
  return parsed.data;
}

export function registerCircleCommands(program: Command): void {
  const circles = program
    .command('circles')
    .description('trust circles: identities, the circle registry, KNOCK and discovery')
    .addOption(
      new Option('--registry-id <id>', 'workflow id of the circle registry')
        .env('AGENT_JUDGE_CIRCLE_REGISTRY')
        .default(CIRCLE_REGISTRY_WORKFLOW_ID),
    )
    .addOption(
      new Option('--task-queue <name>', 'task queue the registry runs on if it has to be started').default(
        DEFAULT_TASK_QUEUES.workflow,
      ),
    )
    .addOption(
      new Option('--operator-key <file>', 'operator key file: signs register, retire, allow-pair and revoke-pair').env(
        'AGENT_JUDGE_CIRCLE_OPERATOR_KEY',
      ),
    );

  circles
    .command('keygen')
    .description(
      'print a new Ed25519 identity {"amid","public_key","private_key"}; save it to a file and keep it private',
    )
    .action(() => printJson(generateIdentity()));

  circles
    .command('register')
    .description('operator: register a top-level agent, which gets a new circle; prints {"amid","circle_id","role"}')
    .requiredOption('--public-key <key>', "the agent's public key (public_key of its key file)")
    .option('--org <name>', 'organisation (top-level agents of different organisations need allow-pair)')
    .action(async (opts: { publicKey: string; org?: string }, cmd: Command) => {
      await withRegistry(cmd, async (registry) => {
        const r = await registry.registerTopLevel({
          public_key: opts.publicKey,
          ...(opts.org ? { org: opts.org } : {}),
        });
        printJson({ amid: r.amid, circle_id: r.circle_id, role: r.role });
      });
    });

  circles
    .command('spawn')
    .description(
      'spawn a sub-agent: the parent signs its membership locally; prints {"amid","circle_id","parent_amid","role"}',
    )
    .requiredOption('--parent-key <file>', "the parent's key file (signs the membership statement)")
    .requiredOption('--public-key <key>', "the sub-agent's public key")
    .action(async (opts: { parentKey: string; publicKey: string }, cmd: Command) => {
      const parentKey = await loadKeyFile(opts.parentKey);
      await withRegistry(cmd, async (registry) => {
        const r = await registry.spawnSubAgent({ parentKey, childPublicKey: opts.publicKey });
        printJson({ amid: r.amid, circle_id: r.circle_id, parent_amid: r.parent_amid, role: r.role });
      });
    });

  circles
    .command('knock')
    .description('KNOCK another agent, signed with your key; prints {"allowed","reason"}, exits 3 when denied')
    .requiredOption('--key <file>', 'your key file')
    .requiredOption('--to <amid>', 'the agent to knock')
    .action(async (opts: { key: string; to: string }, cmd: Command) => {
      const key = await loadKeyFile(opts.key);
      const to = amidArg(opts.to, '--to');
      await withRegistry(cmd, async (registry) => {
        const r = await registry.knock({ key, to });
        printJson({ allowed: r.allowed, reason: r.reason });
        if (!r.allowed) process.exitCode = KNOCK_DENIED_EXIT_CODE;
      });
    });

  circles
    .command('discover')
    .description('list the agents you may see; prints {"agents":[{"amid","role","circle_id","parent_amid"}]}')
    .option('--key <file>', 'your key file')
    .option('--amid <amid>', 'your AMID (instead of --key)')
    .action(async (opts: { key?: string; amid?: string }, cmd: Command) => {
      const requester = await requesterOf(opts);
      await withRegistry(cmd, async (registry) => printJson({ agents: await registry.discover(requester) }));
    });

  circles
    .command('prompt')
    .description('print the Trust Circle paragraph for a sub-agent\'s system prompt as {"prompt"}')
    .option('--key <file>', "the sub-agent's key file")
    .option('--amid <amid>', "the sub-agent's AMID (instead of --key)")
    .action(async (opts: { key?: string; amid?: string }, cmd: Command) => {
      const requester = await requesterOf(opts);
      await withRegistry(cmd, async (registry) => {
        const me = await registry.agent(requester);
        if (!me) throw new BadInputError(`agent ${requester} is not registered`);
        if (me.role !== 'sub-agent' || !me.parent_amid)
          throw new BadInputError(`agent ${requester} is top-level; the Trust Circle paragraph is for sub-agents`);
        const peers = await registry.discover(requester);
        printJson({
          prompt: trustCirclePrompt({
            self: { amid: me.amid, circle_id: me.circle_id, parent_amid: me.parent_amid },
            peers,
          }),
        });
      });
    });

  circles
    .command('tree')
    .description('print every circle as a tree (retired agents included), and the allowlist')
    .option('--circle <id>', 'only this circle')
    .action(async (opts: { circle?: string }, cmd: Command) => {
      await withRegistry(cmd, async (registry) => printJson(await registry.tree(opts.circle)));
    });

  circles
    .command('retire')
    .description('operator: retire an agent and its whole sub-tree; prints {"retired":[amid...]}')
    .requiredOption('--amid <amid>', 'the agent to retire')
    .option('--reason <text>', 'why (kept with the request)')
    .action(async (opts: { amid: string; reason?: string }, cmd: Command) => {
      const amid = amidArg(opts.amid, '--amid');
      await withRegistry(cmd, async (registry) => printJson(await registry.retire(amid, opts.reason)));
    });

  for (const [name, allow] of [
    ['allow-pair', true],
    ['revoke-pair', false],
  ] as const) {
    circles
      .command(name)
      .description(
        `operator: ${allow ? 'allow' : 'revoke'} a top-level pair across organisations; ` +
          `prints {"pair":[a,b],"allowed":${allow}}`,
      )
      .addArgument(new Argument('<amid-a>', 'a top-level agent'))
      .addArgument(new Argument('<amid-b>', 'another top-level agent'))
      .action(async (a: string, b: string, _opts: unknown, cmd: Command) => {
        const first = amidArg(a, '<amid-a>');
        const second = amidArg(b, '<amid-b>');
        await withRegistry(cmd, async (registry) =>
          printJson(allow ? await registry.allowPair(first, second) : await registry.revokePair(first, second)),
        );
      });
  }

  circles
    .command('events')
    .description('governance events (denied KNOCKs, refused spawns, cross-circle hops) with exact totals')
    .option('--since <when>', 'only events since a duration ago (30m, 24h, 7d) or an ISO time')
    .option('--limit <n>', 'at most this many (the newest)')
    .action(async (opts: { since?: string; limit?: string }, cmd: Command) => {
      const since = opts.since === undefined ? undefined : parseSince(opts.since);
      let limit: number | undefined;
      if (opts.limit !== undefined) {
        limit = Number(opts.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
          throw new BadInputError(
            `--limit: expected a whole number from 1 to 10000, got ${JSON.stringify(opts.limit)}`,
          );
      }
      await withRegistry(cmd, async (registry) =>
        printJson(
          await registry.events({
            ...(since !== undefined ? { since } : {}),
            ...(limit !== undefined ? { limit } : {}),
          }),
        ),
      );
    });

  const bridge = circles.command('bridge').description('parent-mediated cross-circle messages (request_cross_circle)');
  bridge
    .command('request')
    .description('sub-agent: ask your parent to carry a message to an agent of another circle; prints the request')
    .requiredOption('--key <file>', 'your key file')
    .requiredOption('--to <amid>', 'the agent in the other circle')
    .requiredOption('--message <text>', 'the message (at most 4 KiB)')
    .action(async (opts: { key: string; to: string; message: string }, cmd: Command) => {
      const key = await loadKeyFile(opts.key);
      const to = amidArg(opts.to, '--to');
      await withRegistry(cmd, async (registry) =>
        printJson(await registry.requestCrossCircle({ key, to, message: opts.message })),
      );
    });
  bridge
    .command('decide')
    .description(
      "parent: forward or decline (sender's parent), deliver or decline (target's parent); prints the request",
    )
    .requiredOption('--key <file>', 'your key file')
    .requiredOption('--request <id>', 'the request id, e.g. bridge-3')
    .addOption(
      new Option('--decision <decision>', 'what to do')
        .choices(['forward', 'deliver', 'decline'])
        .makeOptionMandatory(),
    )
    .option('--reason <text>', 'why (recorded with the hop)')
    .action(
      async (
        opts: { key: string; request: string; decision: 'forward' | 'deliver' | 'decline'; reason?: string },
        cmd: Command,
      ) => {
        const key = await loadKeyFile(opts.key);
        await withRegistry(cmd, async (registry) =>
          printJson(
            await registry.decideCrossCircle({
              key,
              requestId: opts.request,
              decision: opts.decision,
              ...(opts.reason ? { reason: opts.reason } : {}),
            }),
          ),
        );
      },
    );
  bridge
    .command('list')
    .description('requests you sent, must decide, or received; prints {"requests":[...]}')
    .option('--key <file>', 'your key file')
    .option('--amid <amid>', 'your AMID (instead of --key)')
    .action(async (opts: { key?: string; amid?: string }, cmd: Command) => {
      const amid = await requesterOf(opts);
      await withRegistry(cmd, async (registry) => printJson({ requests: await registry.bridgeFor(amid) }));
    });
}

async function requesterOf(opts: { key?: string; amid?: string }): Promise<string> {
  if (opts.key && opts.amid) throw new BadInputError('give --key or --amid, not both');
  if (opts.key) return (await loadKeyFile(opts.key)).amid;
  if (opts.amid) return amidArg(opts.amid, '--amid');
  throw new BadInputError('give --key <file> or --amid <amid>');
}
