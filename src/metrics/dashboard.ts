/**
 * The Grafana dashboard, generated from the same expressions and thresholds as the rules so the
 * colours on screen change exactly where the alerts fire: the seed's metrics against their targets,
 * verdicts by tier, the backlog, and the task queues' schedule-to-start latency (is a worker short?).
 */
import { METRICS } from '../contracts/metric-catalogue';
import type { MetricsSettings } from '../contracts/metrics';
import type { CompliancePolicy } from '../contracts/policy';
import { metricExpressions } from './rules';

const DS = { type: 'prometheus', uid: '${datasource}' };

interface Step {
  color: string;
  value: number | null;
}

/** Colour steps: red past an alert threshold, yellow outside the target band, green inside. */
export function thresholdSteps(m: MetricsSettings[keyof MetricsSettings]): Step[] {
  const steps: Step[] = [{ color: m.alert.below !== undefined ? 'red' : 'green', value: null }];
  if (m.alert.below !== undefined)
    steps.push({ color: m.target.min !== undefined ? 'yellow' : 'green', value: m.alert.below });
  if (m.target.min !== undefined) steps.push({ color: 'green', value: m.target.min });
  if (m.target.max !== undefined) steps.push({ color: 'yellow', value: m.target.max });
  if (m.alert.above !== undefined) steps.push({ color: 'red', value: m.alert.above });
  return steps;
}

type Target = { expr: string; legendFormat?: string };

/** The panel's description: the policy's settings for the metric. */
function describeSettings(m: MetricsSettings[keyof MetricsSettings]): string {
  const sample = m.minSample ? `, min sample ${m.minSample}` : '';
  return `Over ${m.window}; target ${JSON.stringify(m.target)}, alert ${JSON.stringify(m.alert)}${sample}`;
}

let nextId = 1;
function panel(
  type: 'stat' | 'timeseries',
  title: string,
  targets: Target[],
  gridPos: { x: number; y: number; w: number; h: number },
  defaults: Record<string, unknown> = {},
  description?: string,
) {
  return {
    id: nextId++,
    type,
    title,
    ...(description ? { description } : {}),
    datasource: DS,
    gridPos,
    targets: targets.map((t, i) => ({
      datasource: DS,
      refId: String.fromCharCode(65 + i),
      expr: t.expr,
      ...(t.legendFormat ? { legendFormat: t.legendFormat } : {}),
    })),
    fieldConfig: { defaults, overrides: [] },
    options:
      type === 'stat'
        ? { colorMode: 'background', graphMode: 'area', reduceOptions: { calcs: ['lastNotNull'] } }
        : { legend: { displayMode: 'table', placement: 'right' }, tooltip: { mode: 'multi' } },
  };
}

/** The dashboard JSON for a policy's metric settings. */
export function dashboard(policy: CompliancePolicy): Record<string, unknown> {
  nextId = 1;
  const metrics = policy.spec.metrics;
  const unit = { ratio: 'percentunit', seconds: 's', 'per day': 'short' } as const;
  const stats = metricExpressions(metrics).map((e, i) =>
    panel(
      'stat',
      e.title,
      [{ expr: e.expr }],
      { x: (i % 4) * 6, y: Math.floor(i / 4) * 5, w: 6, h: 5 },
      {
        unit: unit[e.unit],
        decimals: e.unit === 'ratio' ? 1 : 2,
        thresholds: { mode: 'absolute', steps: thresholdSteps(metrics[e.name]) },
        color: { mode: 'thresholds' },
      },
      describeSettings(metrics[e.name]) + ' (policy spec.metrics; docs/metrics.md).',
    ),
  );
  const y = 10;
  const rate = '$__rate_interval';
  const series = [
    panel(
      'timeseries',
      'Verdicts by tier (per second)',
      [
        {
          expr: `sum by (tier, verdict, decided_by) (rate(${METRICS.verdicts.name}[${rate}]))`,
          legendFormat: '{{tier}} {{verdict}} ({{decided_by}})',
        },
      ],
      { x: 0, y, w: 12, h: 8 },
      { unit: 'reqps' },
    ),
    panel(
      'timeseries',
      'Decision latency p95 by tier',
      [
        {
          expr: `histogram_quantile(0.95, sum by (le, tier) (rate(${METRICS.decisionLatency.name}_bucket[${rate}])))`,
          legendFormat: '{{tier}}',
        },
      ],
      { x: 12, y, w: 12, h: 8 },
      { unit: 's' },
    ),
    panel(
      'timeseries',
      'Backlog: open proposals by stage',
      [{ expr: `sum by (stage) (${METRICS.open.name})`, legendFormat: '{{stage}}' }],
      { x: 0, y: y + 8, w: 12, h: 8 },
      { unit: 'short' },
    ),
    panel(
      'timeseries',
      'Oldest waiting escalation',
      [{ expr: `max(${METRICS.oldestEscalation.name})`, legendFormat: 'oldest' }],
      { x: 12, y: y + 8, w: 12, h: 8 },
      { unit: 's' },
    ),
    panel(
      'timeseries',
      'Escalations by reason (per hour)',
      [{ expr: `sum by (reason) (rate(${METRICS.escalations.name}[${rate}])) * 3600`, legendFormat: '{{reason}}' }],
      { x: 0, y: y + 16, w: 12, h: 8 },
    ),
    panel(
      'timeseries',
      'Executions and model errors (per hour)',
      [
        {
          expr: `sum by (executor, status) (rate(${METRICS.executions.name}[${rate}])) * 3600`,
          legendFormat: '{{executor}} {{status}}',
        },
        {
          expr: `sum by (kind) (rate(${METRICS.modelErrors.name}[${rate}])) * 3600`,
          legendFormat: 'model error: {{kind}}',
        },
      ],
      { x: 12, y: y + 16, w: 12, h: 8 },
    ),
    panel(
      'timeseries',
      'Task queue schedule-to-start p95 (a worker short?)',
      [
        {
          expr:
            'histogram_quantile(0.95, sum by (le, task_queue) ' +
            `(rate(temporal_workflow_task_schedule_to_start_latency_bucket[${rate}])))`,
          legendFormat: 'workflow tasks {{task_queue}}',
        },
        {
          expr:
            'histogram_quantile(0.95, sum by (le, task_queue) ' +
            `(rate(temporal_activity_schedule_to_start_latency_bucket[${rate}])))`,
          legendFormat: 'activities {{task_queue}}',
        },
      ],
      { x: 0, y: y + 24, w: 24, h: 8 },
      { unit: 'ms' },
      'From the Temporal SDK metrics on the same /metrics (milliseconds).',
    ),
  ];
  return {
    title: 'agent-judge',
    uid: 'agent-judge',
    description: `The judge's health (seed 000 §6) for policy ${policy.metadata.name}; generated by agent-judge.`,
    tags: ['agent-judge', 'temporal'],
    schemaVersion: 39,
    version: 1,
    editable: true,
    time: { from: 'now-24h', to: 'now' },
    refresh: '1m',
    templating: {
      list: [
        {
          name: 'datasource',
          label: 'Data source',
          type: 'datasource',
          query: 'prometheus',
          current: {},
          hide: 0,
        },
      ],
    },
    panels: [...stats, ...series],
  };
}

/** Every PromQL expression in a dashboard (for checking them against a real Prometheus). */
export function dashboardExpressions(d: Record<string, unknown>): string[] {
  const panels = d.panels as Array<{ targets: Array<{ expr: string }> }>;
  return panels.flatMap((p) => p.targets.map((t) => t.expr));
}

export function renderDashboard(policy: CompliancePolicy): string {
  return `${JSON.stringify(dashboard(policy), null, 2)}\n`;
}
