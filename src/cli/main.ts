import { Command, CommanderError, Help } from 'commander';
import { packageVersion } from '../package-root';

/** Adds one group's commands (with their real options and actions) to the program. */
type Register = (program: Command) => void;

/** A top-level command as `agent-judge --help` lists it, without loading the module that implements it. */
export interface CommandSummary {
  /** Name, options marker and arguments, as commander prints them (`propose [options] <file>`). */
  term: string;
  description: string;
}

/** The commands one module registers, and how to load that module. */
export interface CommandGroup {
  commands: readonly CommandSummary[];
  load: () => Promise<Register>;
  /** `--help` lists this group's commands right after this command of another group (default: in group order). */
  listedAfter?: string;
}

/**
 * Every command, grouped by the module that implements it. A command loads only its own module (and what that
 * imports), so `--help` or `status` never pay for the worker, the judge or Discord. The summaries are checked
 * against the real registrations by test/unit/cli-main.test.ts.
 */
export const COMMAND_GROUPS: readonly CommandGroup[] = [
  {
    commands: [
      {
        term: 'dev [options]',
        description: 'run everything on this machine: an embedded Temporal dev server (SQLite) and all workers',
      },
      {
        term: 'worker [options]',
        description:
          'run workers against an existing Temporal service ($TEMPORAL_ADDRESS, TLS and API key from the environment)',
      },
    ],
    load: async () => (await import('./server')).registerServerCommands,
  },
  {
    commands: [
      {
        term: 'propose [options] <file>',
        description: 'submit a proposal (JSON file, or - for stdin); prints {"proposal_id","workflow_id"}',
      },
      {
        term: 'clarify [options] <proposal_id> <file>',
        description:
          'answer a CLARIFY with more evidence, a narrower scope or a better justification; prints the new outcome',
      },
      {
        term: 'decide [options] <proposal_id> <decision>',
        description: 'approve or reject an escalated proposal as an approver; prints the new outcome',
      },
      { term: 'audit', description: 'read the audit trail (workflow histories)' },
    ],
    load: async () => (await import('./proposals')).registerProposalCommands,
  },
  {
    commands: [{ term: 'status [options] <proposal_id>', description: 'print the outcome of a proposal' }],
    load: async () => (await import('./status')).registerStatusCommand,
    // Its own module (it must start fast), listed where it always was.
    listedAfter: 'propose',
  },
  {
    commands: [
      {
        term: 'list [options]',
        description:
          'list proposals, newest first (a table on a terminal); --hooks: hook calls decided without a proposal',
      },
    ],
    load: async () => (await import('./list')).registerListCommand,
    // Its own module too (it must start fast), listed where it always was.
    listedAfter: 'status',
  },
  {
    commands: [
      {
        term: 'discord [options]',
        description:
          'run the Discord escalation bot: approvers decide escalated proposals with one click (needs DISCORD_TOKEN)',
      },
    ],
    load: async () => (await import('./discord')).registerDiscordCommand,
  },
  {
    commands: [
      {
        term: 'slack [options]',
        description:
          'run the Slack app: approvers decide escalated proposals with one click ' +
          '(needs SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET or SLACK_APP_TOKEN)',
      },
    ],
    load: async () => (await import('./slack')).registerSlackCommand,
  },
  {
    commands: [
      {
        term: 'inbox [options]',
        description:
          'run the web approval inbox: approvers enrol a passkey by invite, sign in, and sign their decisions',
      },
    ],
    load: async () => (await import('./inbox')).registerInboxCommands,
  },
  {
    commands: [
      {
        term: 'eval [options] [corpus]',
        description:
          'evaluate the judge on a JSONL corpus of {"proposal","expected","tags"} lines, ' +
          'or on a benchmark of the field',
      },
    ],
    load: async () => (await import('./eval')).registerEvalCommand,
  },
  {
    commands: [
      {
        term: 'circles [options]',
        description: 'trust circles: identities, the circle registry, KNOCK and discovery',
      },
    ],
    load: async () => (await import('./circles')).registerCircleCommands,
  },
  {
    commands: [
      {
        term: 'a2a [options]',
        description:
          'serve A2A agent cards for the top-level agents of the circle registry; every message passes KNOCK',
      },
    ],
    load: async () => (await import('./a2a')).registerA2ACommand,
  },
  {
    commands: [
      {
        term: 'review',
        description: 'durable audit reviews: weekly REJECTs and escalations, monthly spot-checks of APPROVEs',
      },
    ],
    load: async () => (await import('./reviews')).registerReviewCommands,
  },
  {
    commands: [
      {
        term: 'report [options] <kind>',
        description: 'the seven judge metrics, REJECTs, escalations and review progress of a period (md, json or html)',
      },
    ],
    load: async () => (await import('./reviews')).registerReportCommand,
  },
  {
    commands: [
      {
        term: 'metrics',
        description: 'generate Prometheus rules and the Grafana dashboard from the policy (docs/metrics.md)',
      },
    ],
    load: async () => (await import('./metrics')).registerMetricsCommands,
  },
  {
    commands: [
      {
        term: 'grants',
        description: 'scoped grants: approve calls like one proposal for a while or a number of uses (docs/grants.md)',
      },
    ],
    load: async () => (await import('./grants')).registerGrantCommands,
    listedAfter: 'decide',
  },
  {
    commands: [{ term: 'capability', description: 'capability tokens of approved actions: check one, redeem it once' }],
    load: async () => (await import('./capability')).registerCapabilityCommands,
  },
  {
    commands: [
      {
        term: 'mcp [options] [upstream...]',
        description:
          'judge every tools/call of one MCP server: an MCP server (stdio or --http) in front of the upstream',
      },
    ],
    load: async () => (await import('./mcp')).registerMcpCommands,
  },
  {
    commands: [
      {
        term: 'policy',
        description:
          'the effective policy: what a file changes against the default, where each value comes from; policy tests',
      },
    ],
    load: async () => (await import('./policy')).registerPolicyCommands,
  },
  {
    commands: [
      {
        term: 'replay [options]',
        description:
          're-decide recorded proposals under a candidate policy or judge model, with no side effect (docs/replay.md)',
      },
    ],
    load: async () => (await import('./replay')).registerReplayCommand,
    listedAfter: 'policy',
  },
  {
    commands: [
      {
        term: 'hook',
        description: 'coding agents’ hooks on the gate: the command hook, check, install, uninstall, token',
      },
    ],
    load: async () => (await import('./hooks')).registerHookCommands,
  },
  {
    commands: [
      {
        term: 'gate [options]',
        description: 'run the resident gate for coding agents’ hooks on loopback (agent-judge dev runs one too)',
      },
    ],
    load: async () => (await import('./hooks')).registerGateCommand,
  },
  {
    commands: [{ term: 'schema <name>', description: 'print the JSON Schema of a contract' }],
    load: async () => (await import('./schema')).registerSchemaCommand,
  },
];

/** Every command summary in the order `--help` lists them (group order, moved by `listedAfter`). */
function listingOrder(): CommandSummary[] {
  const listed = COMMAND_GROUPS.filter((g) => g.listedAfter === undefined).flatMap((g) => g.commands);
  for (const group of COMMAND_GROUPS.filter((g) => g.listedAfter !== undefined)) {
    const at = listed.findIndex((c) => nameOf(c) === group.listedAfter);
    listed.splice(at < 0 ? listed.length : at + 1, 0, ...group.commands);
  }
  return listed;
}

/** The name a summary's term starts with. */
function nameOf(summary: CommandSummary): string {
  return summary.term.split(' ', 1)[0] ?? summary.term;
}

/** Global options that take a value: their value is never the command name. */
const GLOBAL_OPTIONS_WITH_VALUE = new Set(['--address', '--namespace']);

/** The command `argv` runs (`help <command>` included), or undefined for the program's own help. */
export function commandNameOf(argv: readonly string[]): string | undefined {
  const args = argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (GLOBAL_OPTIONS_WITH_VALUE.has(arg)) i += 1;
    else if (arg === 'help') return args[i + 1];
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

function baseProgram(): Command {
  return new Command('agent-judge')
    .description('Agents propose, a judge decides, people break ties; every step is a durable Temporal workflow.')
    .option('--address <host:port>', 'Temporal frontend (default: $TEMPORAL_ADDRESS or localhost:7233)')
    .option('--namespace <name>', 'Temporal namespace (default: $TEMPORAL_NAMESPACE or default)')
    .version(packageVersion(), '-V, --version', 'print the installed agent-judge version')
    .exitOverride();
}

/**
 * The `agent-judge` command line: a thin layer over src/client/. Built with commander for real `--help`, option
 * parsing and subcommands. With a known command in `argv`, only that command's module is loaded; otherwise every
 * command is listed from its summary, so the program's help loads no Temporal client and no schemas.
 */
export async function buildProgram(argv: readonly string[] = []): Promise<Command> {
  const program = baseProgram();
  const name = commandNameOf(argv);
  const group = COMMAND_GROUPS.find((g) => g.commands.some((c) => nameOf(c) === name));
  if (group) {
    (await group.load())(program);
    return program;
  }
  const terms = new Map<string, string>();
  for (const summary of listingOrder()) {
    terms.set(nameOf(summary), summary.term);
    program.command(nameOf(summary)).description(summary.description);
  }
  const help = new Help();
  program.configureHelp({ subcommandTerm: (cmd) => terms.get(cmd.name()) ?? help.subcommandTerm(cmd) });
  return program;
}

/** Runs the command line; resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  try {
    const program = await buildProgram(argv);
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; usage errors are bad input.
      return err.exitCode === 0 ? 0 : 2;
    }
    const { describeError, exitCodeFor } = await import('./io');
    process.stderr.write(`${describeError(err)}\n`);
    return exitCodeFor(err);
  }
}
