import { writeFile } from 'node:fs/promises';
import { type Command, Option } from 'commander';
import { loadPolicy } from '../policy/load';
import { renderDashboard } from '../metrics/dashboard';
import { parseLabels, renderRules, type RulesFormat } from '../metrics/rules';

/** Writes to `--out` or stdout. */
async function emit(text: string, out: string | undefined): Promise<void> {
  if (out) await writeFile(out, text);
  else process.stdout.write(text);
}

/** `agent-judge metrics rules|dashboard`: the policy's metric table as Prometheus rules and a Grafana dashboard. */
export function registerMetricsCommands(program: Command): void {
  const metrics = program
    .command('metrics')
    .description('generate Prometheus rules and the Grafana dashboard from the policy (docs/metrics.md)');
  metrics
    .command('rules')
    .description('Prometheus recording and alerting rules for spec.metrics (seed 000 §6), or a PrometheusRule')
    .option('--policy <file>', 'CompliancePolicy YAML (default: $AGENT_JUDGE_POLICY or policies/default.yaml)')
    .addOption(
      new Option('--format <format>', 'a Prometheus rules file or a Kubernetes PrometheusRule')
        .choices(['rules', 'prometheusrule'])
        .default('rules'),
    )
    .option('--labels <k=v,...>', 'extra labels: on each alert (rules), on the PrometheusRule object (prometheusrule)')
    .addOption(new Option('--job <name>', 'Prometheus job of the agent-judge targets').default('agent-judge'))
    .option('--out <file>', 'write here instead of stdout')
    .action(async (opts: { policy?: string; format: RulesFormat; labels?: string; job: string; out?: string }) => {
      const policy = await loadPolicy({ path: opts.policy });
      const labels = opts.labels === undefined ? undefined : parseLabels(opts.labels);
      await emit(renderRules(policy, opts.format, { labels, job: opts.job }), opts.out);
    });
  metrics
    .command('dashboard')
    .description('the Grafana dashboard JSON (datasource variable, the seed metrics with thresholds, backlog)')
    .option('--policy <file>', 'CompliancePolicy YAML (default: $AGENT_JUDGE_POLICY or policies/default.yaml)')
    .option('--out <file>', 'write here instead of stdout')
    .action(async (opts: { policy?: string; out?: string }) => {
      await emit(renderDashboard(await loadPolicy({ path: opts.policy })), opts.out);
    });
}
