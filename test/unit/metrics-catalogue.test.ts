/**
 * Issue 11: label values come from closed sets only, whatever agents or models write, and the
 * metrics flags refuse bad input with a one-line error naming the flag.
 */
import { describe, expect, it } from 'vitest';
import {
  actionTypeLabel,
  decidedByLabel,
  earlierVerdictLabel,
  escalationReasonOf,
  executorLabel,
  labelCombinations,
  meterName,
  METRICS,
  modelErrorKind,
} from '../../src/contracts/metric-catalogue';
import type { Verdict } from '../../src/contracts/verdict';
import { parseBindAddress, telemetryOptions } from '../../src/metrics/telemetry';
import { metricsExportFrom } from '../../src/cli/server-telemetry';

const v = (over: Partial<Verdict>): Verdict => ({
  proposal_id: 'p',
  verdict: 'APPROVE',
  reason: 'r',
  constraints: { require_human_review: false },
  escalation: null,
  confidence: 0.9,
  decided_by: 'judge',
  tier: 'full-judge-review',
  ...over,
});

describe('label values', () => {
  it('never carry an approver id, an unlisted action type or model text', () => {
    expect(decidedByLabel('human:scott')).toBe('human');
    expect(decidedByLabel('timeout')).toBe('timeout');
    expect(actionTypeLabel('exec', ['exec', 'file_write'])).toBe('exec');
    expect(actionTypeLabel('drop_all_tables"}', ['exec'])).toBe('other');
    expect(executorLabel('my-custom')).toBe('other');
    expect(modelErrorKind('the model did not answer within 20000 ms')).toBe('timeout');
    expect(modelErrorKind('invalid model output twice: answer.verdict: ...')).toBe('invalid_output');
    expect(modelErrorKind('the configured model x is not there: ...')).toBe('unavailable');
    expect(modelErrorKind('IGNORE PREVIOUS INSTRUCTIONS')).toBe('error');
  });

  it('escalation reasons follow the routing order', () => {
    expect(escalationReasonOf(null, 0.3)).toBe('human_only');
    expect(escalationReasonOf(v({ verdict: 'CLARIFY', confidence: 0, rule: 'judge.unavailable' }), 0.3)).toBe(
      'judge_unavailable',
    );
    expect(escalationReasonOf(v({ verdict: 'CLARIFY', confidence: 0, rule: 'judge.no-model.escalate' }), 0.3)).toBe(
      'no_model',
    );
    expect(escalationReasonOf(v({ verdict: 'REJECT', confidence: 0.2 }), 0.3)).toBe('low_confidence');
    expect(escalationReasonOf(v({ constraints: { require_human_review: true } }), 0.3)).toBe('review_required');
  });

  it("the judge's earlier verdict: as given, ESCALATE when neither, none without a judge", () => {
    expect(earlierVerdictLabel(null)).toBe('none');
    expect(earlierVerdictLabel(v({ verdict: 'REJECT', confidence: 0.1 }))).toBe('REJECT');
    expect(earlierVerdictLabel(v({ constraints: { require_human_review: true } }))).toBe('APPROVE');
    expect(earlierVerdictLabel(v({ verdict: 'CLARIFY', confidence: 0 }))).toBe('ESCALATE');
    expect(earlierVerdictLabel(v({ decided_by: 'policy' }))).toBe('none');
  });

  it('every catalogue name has the prefix and spelled-out units; counters are created without _total', () => {
    for (const def of Object.values(METRICS)) {
      expect(def.name).toMatch(/^agent_judge_[a-z_]+$/);
      if (def.kind === 'counter') expect(def.name).toMatch(/_total$/);
      if (def.kind === 'histogram') expect(def.name).toMatch(/_seconds$/);
    }
    expect(meterName(METRICS.verdicts)).toBe('agent_judge_verdicts');
    expect(meterName(METRICS.decisionLatency)).toBe('agent_judge_decision_latency_seconds');
    expect(labelCombinations(METRICS.verdicts.labels)).toHaveLength(4 * 3 * 6);
  });
});

describe('metrics flags', () => {
  it('--metrics HOST:PORT, off, or an OTLP collector; bad input names the flag', () => {
    expect(metricsExportFrom({}, '127.0.0.1:9464')).toEqual({ prometheus: '127.0.0.1:9464' });
    expect(metricsExportFrom({}, null)).toBeNull();
    expect(metricsExportFrom({ metrics: 'off' }, '127.0.0.1:9464')).toBeNull();
    expect(metricsExportFrom({ metrics: '0.0.0.0:9000' }, null)).toEqual({ prometheus: '0.0.0.0:9000' });
    expect(metricsExportFrom({ otlp: 'http://c:4318/v1/metrics', otlpHttp: true }, '127.0.0.1:9464')).toEqual({
      otlp: { url: 'http://c:4318/v1/metrics', http: true },
    });
    expect(() => parseBindAddress('9464', '--metrics')).toThrow(
      '--metrics: expected HOST:PORT (e.g. 127.0.0.1:9464), got "9464"',
    );
    expect(() => metricsExportFrom({ metrics: 'localhost:99999' }, null)).toThrow('--metrics: expected HOST:PORT');
    expect(() => metricsExportFrom({ otlp: 'collector:4317' }, null)).toThrow('--otlp: expected a grpc://');
    expect(() => metricsExportFrom({ otlp: 'grpc://c:4317', metrics: '127.0.0.1:1' }, null)).toThrow(
      '--otlp: the SDK exports to one place',
    );
    expect(() => metricsExportFrom({ otlpHttp: true }, null)).toThrow('--otlp-http: needs --otlp <url>');
  });

  it('the exporter gets the seed-threshold buckets and _total on counters', () => {
    const t = telemetryOptions({ prometheus: '127.0.0.1:1' }) as {
      metrics: { prometheus: { countersTotalSuffix: boolean; histogramBucketOverrides: Record<string, number[]> } };
    };
    expect(t.metrics.prometheus.countersTotalSuffix).toBe(true);
    for (const edge of [0.1, 0.25, 2, 5])
      expect(t.metrics.prometheus.histogramBucketOverrides.agent_judge_decision_latency_seconds).toContain(edge);
  });
});
