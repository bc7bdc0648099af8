import { describe, expect, it } from 'vitest';
import { CompliancePolicySchema } from '../../src/contracts/policy';
import { DEFAULT_METRICS } from '../../src/contracts/metrics';
import { defaultPolicyWith } from '../../src/policy/load';

describe('spec.metrics', () => {
  it("defaults to the seed's table", () => {
    expect(defaultPolicyWith({}).spec.metrics).toEqual(DEFAULT_METRICS);
  });

  it('takes one metric overridden alone and keeps the rest', () => {
    const p = defaultPolicyWith({
      metrics: { escalationsPerDay: { target: { max: 5 }, alert: { above: 20 }, window: '1d' } },
    });
    expect(p.spec.metrics.escalationsPerDay.alert.above).toBe(20);
    expect(p.spec.metrics.approvalRate).toEqual(DEFAULT_METRICS.approvalRate);
  });

  it('refuses a metric without an alert and an unknown metric, naming the field', () => {
    const base = defaultPolicyWith({});
    const bad = (metrics: unknown) =>
      CompliancePolicySchema.safeParse({ ...base, spec: { ...base.spec, metrics } }).error?.issues[0];
    expect(bad({ approvalRate: { target: {}, alert: {}, window: '1d' } })).toMatchObject({
      path: ['spec', 'metrics', 'approvalRate', 'alert'],
    });
    expect(bad({ approvalRte: {} })?.code).toBe('unrecognized_keys');
    expect(bad({ approvalRate: { target: {}, alert: { above: 1 }, window: '1 day' } })?.message).toMatch(
      /Prometheus range/,
    );
  });
});
