/**
 * Issue 11, alerts as data: the committed deploy/ files are exactly what the generator makes from the
 * default policy, promtool accepts them, and the alert unit tests (deploy/prometheus/*.test.yml: each
 * alert fires and stays quiet where it should, a counter reset on a worker restart included) pass.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadPolicy } from '../../src/policy/load';
import { dashboard, dashboardExpressions, renderDashboard, thresholdSteps } from '../../src/metrics/dashboard';
import { metricExpressions, parseLabels, renderRules } from '../../src/metrics/rules';
import { DEFAULT_METRICS } from '../../src/contracts/metrics';
import { defaultPolicyWith } from '../../src/policy/load';
import { toolPath } from '../helpers/tools';

const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));
const read = (rel: string) => readFileSync(join(DEPLOY, rel), 'utf8');
const policy = await loadPolicy({ env: {} });
// Found on PATH or unpacked from Debian's package by the test setup (scripts/test-tools.mjs).
const promtool = (...args: string[]) => spawnSync(toolPath('promtool'), args, { encoding: 'utf8' });

describe('generated deploy files', () => {
  it('are what `agent-judge metrics rules|dashboard` makes from the default policy', () => {
    const regenerate =
      'regenerate with: agent-judge metrics rules --out deploy/prometheus/agent-judge.rules.yml; ' +
      '... --format prometheusrule --labels release=kube-prometheus-stack ' +
      '--out deploy/kubernetes/agent-judge.prometheusrule.yaml; ' +
      'agent-judge metrics dashboard --out deploy/grafana/agent-judge.dashboard.json';
    expect(read('prometheus/agent-judge.rules.yml'), regenerate).toBe(renderRules(policy, 'rules'));
    expect(read('kubernetes/agent-judge.prometheusrule.yaml'), regenerate).toBe(
      renderRules(policy, 'prometheusrule', { labels: { release: 'kube-prometheus-stack' } }),
    );
    expect(read('grafana/agent-judge.dashboard.json'), regenerate).toBe(renderDashboard(policy));
  });

  it('promtool check rules accepts the rules file and the PrometheusRule spec', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-judge-rules-'));
    try {
      const spec = (parse(read('kubernetes/agent-judge.prometheusrule.yaml')) as { spec: unknown }).spec;
      writeFileSync(join(dir, 'from-prometheusrule.yml'), JSON.stringify(spec));
      const res = promtool(
        'check',
        'rules',
        join(DEPLOY, 'prometheus/agent-judge.rules.yml'),
        join(dir, 'from-prometheusrule.yml'),
      );
      expect(res.stdout + res.stderr).toMatch(/SUCCESS: 27 rules found[\s\S]*SUCCESS: 27 rules found/);
      expect(res.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('promtool test rules: alerts fire and stay quiet where they should', () => {
    const res = promtool(
      'test',
      'rules',
      join(DEPLOY, 'prometheus/agent-judge.rules.test.yml'),
      join(DEPLOY, 'prometheus/agent-judge.review-rules.test.yml'),
    );
    expect(res.stdout + res.stderr).not.toContain('FAILED');
    expect((res.stdout + res.stderr).match(/SUCCESS/g)).toHaveLength(2);
    expect(res.status).toBe(0);
  });
});

describe('rules from the policy', () => {
  it('follow spec.metrics: a changed threshold, window and minimum sample change the rules', () => {
    const p = defaultPolicyWith({
      metrics: { approvalRate: { target: { min: 0.6 }, alert: { below: 0.4 }, window: '2d', minSample: 50 } },
    });
    const text = renderRules(p, 'rules');
    expect(text).toContain('agent_judge:approval_rate < 0.4 and agent_judge:approval_rate:sample >= 50');
    expect(text).toContain('sum(increase(agent_judge_judged_proposals_total{verdict="APPROVE"}[2d]))');
    expect(text).not.toContain('AgentJudgeApprovalRateHigh');
    // Escalations per day over a 2-day window are halved.
    const w = defaultPolicyWith({
      metrics: { escalationsPerDay: { target: { max: 3 }, alert: { above: 10 }, window: '2d' } },
    });
    expect(metricExpressions(w.spec.metrics).find((e) => e.name === 'escalationsPerDay')?.expr).toBe(
      'sum(increase(agent_judge_escalations_total[2d])) * 0.5',
    );
  });

  it('--labels: on every alert, or on the PrometheusRule object; a bad pair is refused naming it', () => {
    const rules = parse(renderRules(policy, 'rules', { labels: { team: 'ops' } })) as {
      groups: Array<{ rules: Array<{ alert?: string; labels?: Record<string, string> }> }>;
    };
    const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert);
    expect(alerts.length).toBeGreaterThan(10);
    expect(alerts.every((a) => a.labels?.team === 'ops')).toBe(true);
    expect(() => parseLabels('team=ops,oops')).toThrow('--labels: "oops" is not key=value');
    expect(parseLabels('release=kube-prometheus-stack, prometheus=k8s')).toEqual({
      release: 'kube-prometheus-stack',
      prometheus: 'k8s',
    });
  });
});

describe('the dashboard', () => {
  it('has a datasource variable, the seed metrics with thresholds, verdicts by tier, backlog, queue latency', () => {
    const d = dashboard(policy) as {
      templating: { list: Array<{ name: string; type: string }> };
      panels: Array<{
        title: string;
        datasource: { uid: string };
        fieldConfig: { defaults: { thresholds?: unknown } };
      }>;
    };
    expect(d.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource' }));
    expect(d.panels.every((p) => p.datasource.uid === '${datasource}')).toBe(true);
    const titles = d.panels.map((p) => p.title);
    expect(titles).toEqual(
      expect.arrayContaining([
        'Approval rate (judge)',
        'Human override rate',
        'False-negative rate (weekly reviews)',
        'False-approval rate (spot-checks)',
        'Lightweight decision latency p95',
        'Full-judge decision latency p95',
        'Clarify cycles per approval',
        'Escalations per day',
        'Verdicts by tier (per second)',
        'Backlog: open proposals by stage',
        'Task queue schedule-to-start p95 (a worker short?)',
      ]),
    );
    const approval = d.panels.find((p) => p.title === 'Approval rate (judge)')!;
    expect(approval.fieldConfig.defaults.thresholds).toEqual({
      mode: 'absolute',
      steps: [
        { color: 'red', value: null },
        { color: 'yellow', value: 0.5 },
        { color: 'green', value: 0.7 },
        { color: 'yellow', value: 0.85 },
        { color: 'red', value: 0.95 },
      ],
    });
    expect(thresholdSteps(DEFAULT_METRICS.fullJudgeLatencyP95Seconds)).toEqual([
      { color: 'green', value: null },
      { color: 'yellow', value: 2 },
      { color: 'red', value: 5 },
    ]);
    expect(dashboardExpressions(d).length).toBeGreaterThan(14);
  });
});
