/**
 * One `/metrics` per process: the Temporal SDK's own Prometheus exporter carries the SDK's metrics
 * and ours (workflow and activity meters, the worker's gauges), so there is no second HTTP server
 * and no second metrics library. The Runtime is one per process: install it before anything
 * (a connection, a worker) creates the default one.
 */
import type { MetricMeter } from '@temporalio/common';
import type { RuntimeOptions } from '@temporalio/worker';
import { BadInputError } from '../contracts/errors';
import {
  HISTOGRAM_BUCKETS,
  labelCombinations,
  meterName,
  METRICS,
  OTHER_ACTION_TYPE,
} from '../contracts/metric-catalogue';
import type { CompliancePolicy } from '../contracts/policy';
import { PROPOSAL_WORKFLOW_TYPE, type TaskQueues } from '../names';

/** Where metrics go: a Prometheus endpoint to scrape, and/or (not both: the SDK takes one) OTLP. */
export type MetricsExport = { prometheus: string } | { otlp: { url: string; http?: boolean } } | null;

/** The default `dev` endpoint: loopback only (metrics name action types and stages, not for the world). */
export const DEFAULT_DEV_METRICS_ADDRESS = '127.0.0.1:9464';

/** `HOST:PORT` checked, with a one-line error naming the option. */
export function parseBindAddress(value: string, option: string): string {
  const m = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || !(port >= 0 && port <= 65535))
    throw new BadInputError(`${option}: expected HOST:PORT (e.g. 127.0.0.1:9464), got ${JSON.stringify(value)}`);
  return `${m[1]}:${port}`;
}

/** An OTLP collector URL checked: grpc://, http://, grpcs:// or https://. */
export function parseOtlpUrl(value: string, option: string): string {
  if (!/^(grpcs?|https?):\/\/[^\s/]+/.test(value))
    throw new BadInputError(`${option}: expected a grpc://, http://, grpcs:// or https:// collector URL, got ${value}`);
  return value;
}

/** The Runtime's `telemetryOptions` for an export choice; our histograms get the seed's bucket edges. */
export function telemetryOptions(exp: MetricsExport): RuntimeOptions['telemetryOptions'] {
  if (exp === null) return undefined;
  const histogramBucketOverrides = HISTOGRAM_BUCKETS;
  if ('prometheus' in exp) {
    // countersTotalSuffix: Temporal's own counters lack `_total` otherwise (promtool flags them).
    return {
      metrics: { prometheus: { bindAddress: exp.prometheus, histogramBucketOverrides, countersTotalSuffix: true } },
    };
  }
  return {
    metrics: {
      otel: {
        url: exp.otlp.url,
        http: exp.otlp.http ?? false,
        histogramBucketOverrides,
        metricsExportInterval: '10s',
      },
    },
  };
}

export interface SeriesScope {
  namespace: string;
  taskQueues: TaskQueues;
  policy: CompliancePolicy;
  roles: readonly string[];
  /** The reviews workflow's type, when it runs on this worker: its marks start at zero too. */
  reviewWorkflowType?: string;
}

/**
 * Creates every counter series at zero with the exact labels the workflow and activity meters will
 * add, so the first real event is an increase `rate()` can see (a series born at 1 is lost to it).
 * Histograms cannot be created empty through the SDK meter: they appear with their first sample.
 */
export function initialiseSeries(meter: MetricMeter, scope: SeriesScope): number {
  let created = 0;
  const zero = (
    m: MetricMeter,
    def: { name: string; kind: 'counter'; help: string },
    combos: Record<string, string>[],
  ) => {
    const c = m.createCounter(meterName(def), undefined, def.help);
    for (const tags of combos) c.add(0, tags);
    created += combos.length;
  };
  const { namespace, taskQueues, policy } = scope;
  if (scope.roles.includes('workflow')) {
    const wf = meter.withTags({ namespace, taskQueue: taskQueues.workflow, workflowType: PROPOSAL_WORKFLOW_TYPE });
    for (const def of [
      METRICS.verdicts,
      METRICS.judged,
      METRICS.finalVerdicts,
      METRICS.clarifyRequests,
      METRICS.escalations,
      METRICS.humanDecisions,
      METRICS.executions,
    ]) {
      zero(wf, def, labelCombinations(def.labels));
    }
    // Proposals closed: each listed action type under its own tier, unlisted ones as `other`.
    const types = [
      ...policy.spec.riskMatrix.map((e) => ({ action_type: e.actionType, tier: e.tier })),
      { action_type: OTHER_ACTION_TYPE, tier: policy.spec.defaultTier as string },
    ];
    zero(
      wf,
      METRICS.closed,
      types.flatMap((t) => METRICS.closed.labels.status.map((status) => ({ ...t, status }))),
    );
    if (scope.reviewWorkflowType) {
      const rv = meter.withTags({ namespace, taskQueue: taskQueues.workflow, workflowType: scope.reviewWorkflowType });
      zero(rv, METRICS.reviewMarks, labelCombinations(METRICS.reviewMarks.labels));
    }
  }
  if (scope.roles.includes('judge')) {
    const judge = meter.withTags({ namespace, taskQueue: taskQueues.judge, activityType: 'judge' });
    zero(judge, METRICS.modelErrors, labelCombinations(METRICS.modelErrors.labels));
  }
  if (scope.roles.includes('executor')) {
    // The executor refuses a memory store that is not the agent's or is full (the limits it counts).
    const executor = meter.withTags({ namespace, taskQueue: taskQueues.execute, activityType: 'execute' });
    zero(executor, METRICS.limitRefusals, labelCombinations(METRICS.limitRefusals.labels));
  }
  return created;
}
