/**
 * Seed 000 §6 as Prometheus rules, generated from the policy (`spec.metrics`): one recording rule
 * per metric (and its sample size), an alert per threshold that stays quiet below the minimum
 * sample, and the operational alerts (an escalation waiting too long, model errors, an overdue
 * review, the metrics target down). `increase()` over counters makes a worker restart (a counter
 * reset) harmless. The same expressions feed the Grafana dashboard.
 */
import { stringify } from 'yaml';
import { durationMs } from '../contracts/duration';
import { BadInputError } from '../contracts/errors';
import { METRICS } from '../contracts/metric-catalogue';
import type { MetricName, MetricsSettings } from '../contracts/metrics';
import type { CompliancePolicy } from '../contracts/policy';

const M = METRICS;
const inc = (series: string, window: string) => `sum(increase(${series}[${window}]))`;

/** One of the seed's metrics as PromQL: its value, and for ratios the sample its denominator counts. */
export interface MetricExpression {
  name: MetricName;
  /** The recording rule's name (`agent_judge:<metric>`). */
  record: string;
  expr: string;
  /** Ratios only: the events in the window (alerts wait for `minSample`). */
  sample?: string;
  unit: 'ratio' | 'seconds' | 'per day';
  title: string;
}

/** PromQL for each metric over its policy window (docs/metrics.md defines each one). */
export function metricExpressions(metrics: MetricsSettings): MetricExpression[] {
  const w = (n: MetricName) => metrics[n].window;
  const judged = (window: string, verdict?: string) =>
    inc(`${M.judged.name}${verdict ? `{verdict="${verdict}"}` : ''}`, window);
  const human = (window: string, sel: string) => inc(`${M.humanDecisions.name}{${sel}}`, window);
  const marks = (window: string, review: string, verdict: string, wrong: boolean) =>
    inc(`${M.reviewMarks.name}{review="${review}",verdict="${verdict}"${wrong ? ',mark="wrong"' : ''}}`, window);
  const p95 = (tier: string, window: string) =>
    `histogram_quantile(0.95, sum by (le) (rate(${M.decisionLatency.name}_bucket{tier="${tier}"}[${window}])))`;
  const perDay = (window: string) => 86_400 / rangeSeconds(window);
  // `or` joins the two kinds of override before summing: `a + b` would be empty whenever one side has no series.
  const overrides = (window: string) =>
    `sum(increase(${M.humanDecisions.name}{decision="approve",judge_verdict="REJECT"}[${window}]) or ` +
    `increase(${M.humanDecisions.name}{decision="reject",judge_verdict="APPROVE"}[${window}]))`;
  return [
    {
      name: 'approvalRate',
      record: 'agent_judge:approval_rate',
      expr: `${judged(w('approvalRate'), 'APPROVE')} / ${judged(w('approvalRate'))}`,
      sample: judged(w('approvalRate')),
      unit: 'ratio',
      title: 'Approval rate (judge)',
    },
    {
      name: 'humanOverrideRate',
      record: 'agent_judge:human_override_rate',
      expr: `${overrides(w('humanOverrideRate'))} / ${human(w('humanOverrideRate'), 'judge_verdict!="none"')}`,
      sample: human(w('humanOverrideRate'), 'judge_verdict!="none"'),
      unit: 'ratio',
      title: 'Human override rate',
    },
    {
      name: 'falseNegativeRate',
      record: 'agent_judge:false_negative_rate',
      expr:
        `${marks(w('falseNegativeRate'), 'weekly', 'REJECT', true)} / ` +
        `${marks(w('falseNegativeRate'), 'weekly', 'REJECT', false)}`,
      sample: marks(w('falseNegativeRate'), 'weekly', 'REJECT', false),
      unit: 'ratio',
      title: 'False-negative rate (weekly reviews)',
    },
    {
      name: 'falseApprovalRate',
      record: 'agent_judge:false_approval_rate',
      expr:
        `${marks(w('falseApprovalRate'), 'spot_check', 'APPROVE', true)} / ` +
        `${marks(w('falseApprovalRate'), 'spot_check', 'APPROVE', false)}`,
      sample: marks(w('falseApprovalRate'), 'spot_check', 'APPROVE', false),
      unit: 'ratio',
      title: 'False-approval rate (spot-checks)',
    },
    {
      name: 'lightweightLatencyP95Seconds',
      record: 'agent_judge:lightweight_latency_p95_seconds',
      expr: p95('lightweight-approval', w('lightweightLatencyP95Seconds')),
      unit: 'seconds',
      title: 'Lightweight decision latency p95',
    },
    {
      name: 'fullJudgeLatencyP95Seconds',
      record: 'agent_judge:full_judge_latency_p95_seconds',
      expr: p95('full-judge-review', w('fullJudgeLatencyP95Seconds')),
      unit: 'seconds',
      title: 'Full-judge decision latency p95',
    },
    {
      name: 'clarifyCyclesPerApproval',
      record: 'agent_judge:clarify_cycles_per_approval',
      expr:
        `${inc(M.clarifyRequests.name, w('clarifyCyclesPerApproval'))} / ` +
        `${inc(`${M.finalVerdicts.name}{verdict="APPROVE"}`, w('clarifyCyclesPerApproval'))}`,
      sample: inc(`${M.finalVerdicts.name}{verdict="APPROVE"}`, w('clarifyCyclesPerApproval')),
      unit: 'ratio',
      title: 'Clarify cycles per approval',
    },
    {
      name: 'escalationsPerDay',
      record: 'agent_judge:escalations_per_day',
      expr: scaled(inc(M.escalations.name, w('escalationsPerDay')), round(perDay(w('escalationsPerDay')))),
      unit: 'per day',
      title: 'Escalations per day',
    },
  ];
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;
const scaled = (expr: string, factor: number) => (factor === 1 ? expr : `${expr} * ${factor}`);

/** A Prometheus range (`10m`, `1d`, `2w`) in seconds. */
export function rangeSeconds(range: string): number {
  const m = /^(\d+)([smhdw])$/.exec(range);
  if (!m) throw new Error(`not a Prometheus range: ${range}`);
  const unit = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }[m[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  return Number(m[1]) * unit;
}

/** Alert names in Prometheus style: `AgentJudgeApprovalRateLow`. */
const alertName = (metric: string, side: 'Low' | 'High') =>
  `AgentJudge${metric[0]!.toUpperCase()}${metric.slice(1).replace(/P95Seconds$/, 'P95')}${side}`;

export interface RulesOptions {
  /** Prometheus `job` of the agent-judge targets (the metrics-down alert); default `agent-judge`. */
  job?: string;
  /** Extra labels: on every alert (`rules`), on the PrometheusRule object (`prometheusrule`). */
  labels?: Record<string, string>;
}

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The rule groups (Prometheus rules file shape). */
export function ruleGroups(policy: CompliancePolicy, options: RulesOptions = {}): { groups: unknown[] } {
  const metrics = policy.spec.metrics;
  const exprs = metricExpressions(metrics);
  const extra = options.labels ?? {};
  const recording: Rule[] = exprs.flatMap((e) => [
    { record: e.record, expr: e.expr },
    ...(e.sample ? [{ record: `${e.record}:sample`, expr: e.sample }] : []),
  ]);
  const seed: Rule[] = exprs.flatMap((e) => {
    const m = metrics[e.name];
    const gate = m.minSample !== undefined && e.sample ? ` and ${e.record}:sample >= ${m.minSample}` : '';
    const side = (op: '<' | '>', bound: number, which: 'Low' | 'High'): Rule => ({
      alert: alertName(e.name, which),
      expr: `${e.record} ${op} ${bound}${gate}`,
      for: '5m',
      labels: { severity: 'warning', metric: e.name, ...extra },
      annotations: {
        summary: `${e.title} is ${which === 'Low' ? 'below' : 'above'} its alert threshold ${bound} (seed 000 §6)`,
        description:
          `${e.title} over ${m.window} is {{ $value | printf "%.3g" }}` +
          `${m.target.min !== undefined ? `; target at least ${m.target.min}` : ''}` +
          `${m.target.max !== undefined ? `; target at most ${m.target.max}` : ''}` +
          `${m.minSample !== undefined ? ` (fires only with at least ${m.minSample} events in the window)` : ''}.`,
      },
    });
    return [
      ...(m.alert.below !== undefined ? [side('<', m.alert.below, 'Low')] : []),
      ...(m.alert.above !== undefined ? [side('>', m.alert.above, 'High')] : []),
    ];
  });
  const waitSeconds = Math.round(durationMs(policy.spec.escalation.timeout) / 2000);
  const job = options.job ?? 'agent-judge';
  const ops: Rule[] = [
    {
      alert: 'AgentJudgeEscalationWaitingTooLong',
      expr: `max(${M.oldestEscalation.name}) > ${waitSeconds}`,
      for: '5m',
      labels: { severity: 'warning', ...extra },
      annotations: {
        summary: 'A proposal has waited for a person for more than half its escalation timeout',
        description:
          `The oldest waiting escalation is {{ $value | humanizeDuration }} old; at ` +
          `${policy.spec.escalation.timeout} it is rejected by the clock. agent-judge list --status awaiting_human.`,
      },
    },
    {
      alert: 'AgentJudgeModelErrors',
      expr: `${inc(M.modelErrors.name, '15m')} >= 3`,
      labels: { severity: 'warning', ...extra },
      annotations: {
        summary: 'The judge model is failing: its proposals go to people',
        description: '{{ $value }} model calls gave no usable verdict in 15 minutes (timeouts, invalid output, gone).',
      },
    },
    {
      alert: 'AgentJudgeWeeklyReviewOverdue',
      expr: `time() - max(${M.reviewLastClosed.name}{review="weekly"}) > ${8 * 86_400}`,
      labels: { severity: 'warning', ...extra },
      annotations: {
        summary: 'No weekly review closed in 8 days (seed 000 §6 audit cadence)',
        description: "Close the week's review: agent-judge review status / review close.",
      },
    },
    {
      alert: 'AgentJudgeSpotCheckOverdue',
      expr: `time() - max(${M.reviewLastClosed.name}{review="spot_check"}) > ${32 * 86_400}`,
      labels: { severity: 'warning', ...extra },
      annotations: {
        summary: 'No monthly spot-check closed in 32 days (seed 000 §6 audit cadence)',
        description: "Close the month's spot-check of APPROVEs.",
      },
    },
    {
      alert: 'AgentJudgeMetricsDown',
      expr: `up{job="${job}"} == 0`,
      for: '5m',
      labels: { severity: 'critical', ...extra },
      annotations: {
        summary: 'Prometheus cannot scrape an agent-judge /metrics target',
        description: '{{ $labels.instance }} has been down for 5 minutes: no metric and no alert above is current.',
      },
    },
  ];
  return {
    groups: [
      { name: 'agent-judge.metrics', interval: '1m', rules: recording },
      { name: 'agent-judge.alerts', rules: [...seed, ...ops] },
    ],
  };
}

export type RulesFormat = 'rules' | 'prometheusrule';

const HEADER = (policy: CompliancePolicy) =>
  `# Generated by \`agent-judge metrics rules\` from policy ${policy.metadata.name} (spec.metrics, seed 000 §6).\n` +
  '# Do not edit: change the policy and generate again (docs/metrics.md).\n';

/** The rules file or the Kubernetes PrometheusRule, as YAML text. */
export function renderRules(policy: CompliancePolicy, format: RulesFormat, options: RulesOptions = {}): string {
  if (format === 'rules') return HEADER(policy) + stringify(ruleGroups(policy, options), { lineWidth: 0 });
  const object = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'agent-judge', labels: { 'app.kubernetes.io/name': 'agent-judge', ...(options.labels ?? {}) } },
    spec: ruleGroups(policy, { job: options.job }),
  };
  return HEADER(policy) + stringify(object, { lineWidth: 0 });
}

/** `k=v,k2=v2` → labels, with a one-line error naming the bad pair. */
export function parseLabels(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of value.split(',').filter((p) => p.trim() !== '')) {
    const m = /^\s*([a-zA-Z_][a-zA-Z0-9_./-]*)=(.*)$/.exec(pair);
    if (!m)
      throw new BadInputError(`--labels: ${JSON.stringify(pair)} is not key=value (key: letters, digits, _ . / -)`);
    out[m[1]!] = m[2]!.trim();
  }
  return out;
}
