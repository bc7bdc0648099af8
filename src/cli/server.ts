import { type Command, Option } from 'commander';

// Registration only: the heavy modules (worker, dev server, discord.js) load when a command runs,
// so `--help` and the short commands start fast.
const WORKER_ROLES = ['workflow', 'judge', 'executor', 'archive'] as const;

/** `--log-format`: readable lines on a terminal by default, JSON for log collectors. */
function logFormatOption(): Option {
  return new Option(
    '--log-format <format>',
    'logs on stderr: pretty or json (default: $LOG_FORMAT, else pretty on a terminal)',
  ).choices(['pretty', 'json']);
}

export function registerServerCommands(program: Command): void {
  program
    .command('dev')
    .description('run everything on this machine: an embedded Temporal dev server (SQLite) and all workers')
    .addOption(new Option('--port <port>', 'Temporal frontend port').default('7233'))
    .option('--ui-port <port>', 'Temporal Web UI port (default: port + 1000)')
    .addOption(new Option('--db <file>', 'SQLite file; state survives restarts').default('.agent-judge/temporal.db'))
    .option('--policy <file>', 'CompliancePolicy YAML (default: $AGENT_JUDGE_POLICY or policies/default.yaml)')
    .option('--headless', 'no Web UI')
    .addOption(logFormatOption())
    .action(
      async (
        opts: { port: string; uiPort?: string; db: string; policy?: string; headless?: boolean; logFormat?: string },
        cmd: Command,
      ) => {
        const { runDev } = await import('./server-run');
        await runDev(opts, cmd);
      },
    );

  program
    .command('worker')
    .description(
      'run workers against an existing Temporal service ($TEMPORAL_ADDRESS, TLS and API key from the environment)',
    )
    .addOption(
      new Option(
        '--role <roles>',
        `comma-separated: ${WORKER_ROLES.join(',')}; "judge" alone is the judge sidecar; ` +
          '"archive" writes spec.audit.archive.dir on this host',
      ).default(WORKER_ROLES.join(',')),
    )
    .option('--policy <file>', 'CompliancePolicy YAML (default: $AGENT_JUDGE_POLICY or policies/default.yaml)')
    .option('--task-queue-prefix <name>', 'task queue prefix (default agent-judge)')
    .addOption(logFormatOption())
    .action(
      async (opts: { role: string; policy?: string; taskQueuePrefix?: string; logFormat?: string }, cmd: Command) => {
        const { runWorker } = await import('./server-run');
        await runWorker(opts, cmd);
      },
    );
}
