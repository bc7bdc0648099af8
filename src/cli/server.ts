import { type Command, Option } from 'commander';
import type { DevOptions } from './dev-run';
import type { MetricsFlags } from './server-telemetry';
import type { WorkerCommandOptions } from './worker-run';

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

/** `--metrics`, `--otlp`, `--otlp-http` (docs/metrics.md). */
function metricsOptions(cmd: Command, defaultAddress: string | null): Command {
  return cmd
    .option(
      '--metrics <host:port|off>',
      defaultAddress
        ? `serve Prometheus /metrics here (default ${defaultAddress}, loopback; a free port if that one is taken)`
        : 'serve Prometheus /metrics on HOST:PORT (SDK metrics and ours; default off)',
    )
    .option(
      '--otlp <url>',
      'push metrics to an OpenTelemetry collector instead (grpc://host:4317 or, with --otlp-http, ' +
        'http://host:4318/v1/metrics)',
    )
    .option('--otlp-http', 'use OTLP/HTTP rather than OTLP/gRPC for --otlp');
}

export function registerServerCommands(program: Command): void {
  const dev = program
    .command('dev')
    .description('run everything on this machine: an embedded Temporal dev server (SQLite) and all workers')
    .addOption(new Option('--port <port>', 'Temporal frontend port').default('7233'))
    .option('--ui-port <port>', 'Temporal Web UI port (default: port + 1000)')
    .addOption(new Option('--db <file>', 'SQLite file; state survives restarts').default('.agent-judge/temporal.db'))
    .option('--policy <file>', 'CompliancePolicy YAML (default: $AGENT_JUDGE_POLICY or policies/default.yaml)')
    .option('--headless', 'no Web UI')
    .option('--gate-port <port>', "the hooks' gate port (default: spec.hooks.gate.listen's, 8766; a free one if taken)")
    .option('--inbox-port <port>', 'the web inbox port (default 8787; a free one if taken)')
    .option('--metrics-port <port>', 'serve /metrics on 127.0.0.1:PORT (default 9464; a free one if taken)')
    .addOption(logFormatOption());
  metricsOptions(dev, '127.0.0.1:9464').action(async (opts: DevOptions & MetricsFlags, cmd: Command) => {
    const { runDev } = await import('./dev-run');
    await runDev(opts, cmd);
  });

  const worker = program
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
    .addOption(logFormatOption());
  metricsOptions(worker, null).action(async (opts: WorkerCommandOptions, cmd: Command) => {
    const { runWorker } = await import('./worker-run');
    await runWorker(opts, cmd);
  });
}
