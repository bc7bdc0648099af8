/**
 * The judge's health metrics as data (seed 000 §6): each metric's target and alert threshold live
 * in the policy (`spec.metrics`) so the Prometheus rules, the dashboard and `agent-judge report`
 * are generated from one table. Defaults are the seed's table; `falseApprovalRate` is the
 * monthly spot-check's figure, which the seed names (false-approval detection) without a row.
 *
 * Units: ratios are fractions (0.05 = 5 %); latencies are seconds; escalations are per day.
 */
import { z } from 'zod';

/** A Prometheus range such as `5m`, `1d` or `7d`. */
const PromRangeSchema = z.string().regex(/^\d+[smhdw]$/, 'expected a Prometheus range such as 10m, 1d or 7d');

const Bound = z.number().nonnegative();

/** One metric: where it should be, where an alert fires, and over what window it is computed. */
export const MetricThresholdSchema = z
  .strictObject({
    /** The band the metric should stay in (either side may be absent). */
    target: z.strictObject({ min: Bound.optional(), max: Bound.optional() }),
    /** An alert fires below `below` or above `above`. */
    alert: z.strictObject({ below: Bound.optional(), above: Bound.optional() }),
    /** The range the live rate is computed over. */
    window: PromRangeSchema,
    /** Ratios only: events in the window before an alert may fire (a ratio of 1 in 2 means nothing). */
    minSample: z.int().positive().optional(),
  })
  .refine((m) => m.alert.below !== undefined || m.alert.above !== undefined, {
    message: 'expected alert.below or alert.above',
    path: ['alert'],
  });
export type MetricThreshold = z.infer<typeof MetricThresholdSchema>;

/** The seed's table (000 §6). */
export const DEFAULT_METRICS = {
  approvalRate: { target: { min: 0.7, max: 0.85 }, alert: { below: 0.5, above: 0.95 }, window: '1d', minSample: 20 },
  humanOverrideRate: { target: { max: 0.05 }, alert: { above: 0.1 }, window: '7d', minSample: 20 },
  falseNegativeRate: { target: { max: 0.02 }, alert: { above: 0.05 }, window: '30d', minSample: 20 },
  falseApprovalRate: { target: { max: 0.02 }, alert: { above: 0.05 }, window: '30d', minSample: 10 },
  lightweightLatencyP95Seconds: { target: { max: 0.1 }, alert: { above: 0.25 }, window: '10m' },
  fullJudgeLatencyP95Seconds: { target: { max: 2 }, alert: { above: 5 }, window: '10m' },
  clarifyCyclesPerApproval: { target: { max: 1 }, alert: { above: 2 }, window: '1d', minSample: 20 },
  escalationsPerDay: { target: { max: 3 }, alert: { above: 10 }, window: '1d' },
} as const satisfies Record<string, MetricThreshold>;

export type MetricName = keyof typeof DEFAULT_METRICS;

/** `spec.metrics`: every metric may be overridden alone; the rest keep the seed's values. */
export const MetricsSettingsSchema = z
  .strictObject(
    Object.fromEntries(
      Object.entries(DEFAULT_METRICS).map(([name, d]) => [name, MetricThresholdSchema.default(structuredClone(d))]),
    ) as { [K in MetricName]: z.ZodDefault<typeof MetricThresholdSchema> },
  )
  .default(structuredClone(DEFAULT_METRICS) as never);
export type MetricsSettings = z.infer<typeof MetricsSettingsSchema>;
