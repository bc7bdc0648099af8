/**
 * Gauges read from Temporal visibility rather than kept in memory: a restarted worker reports the
 * same backlog at once, because the proposals' own search attributes (Stage) are the source.
 */
import type { Client } from '@temporalio/client';
import type { MetricMeter } from '@temporalio/common';
import type { Logger } from '../contracts/logger';
import { METRICS, OPEN_STAGES, REVIEW_KINDS, type ReviewKind } from '../contracts/metric-catalogue';
import { PROPOSAL_WORKFLOW_TYPE } from '../names';

export interface VisibilityGaugeOptions {
  client: Client;
  namespace: string;
  /** The workflow task queue whose proposals this worker reports. */
  taskQueue: string;
  meter: MetricMeter;
  /** Required: where a failed visibility read is said (the gauges then keep their last values). */
  logger: Logger;
  /** Default 15 s (a Prometheus scrape interval). */
  intervalMs?: number;
  /**
   * When the last review of each kind closed (the reviews code answers, e.g. from visibility), for
   * the overdue-review alert. Without it, the gauge is set only by `countClosedReview`.
   */
  lastReviewClosed?: () => Promise<Partial<Record<ReviewKind, Date>>>;
}

export interface VisibilityGauges {
  /** Reads visibility once and sets every gauge (the loop calls it; tests call it directly). */
  refresh(): Promise<void>;
  stop(): void;
}

/** At most this many waiting escalations are read to find the oldest (the rest are younger or equal). */
const MAX_SCANNED = 1000;

/** Starts the gauge loop: proposals open by stage, the oldest waiting escalation, the namespace's retention. */
export function startVisibilityGauges(options: VisibilityGaugeOptions): VisibilityGauges {
  const { client, namespace, taskQueue, meter } = options;
  const open = meter.createGauge(METRICS.open.name, 'int', undefined, METRICS.open.help);
  const oldest = meter.createGauge(METRICS.oldestEscalation.name, 'float', undefined, METRICS.oldestEscalation.help);
  const retention = meter.createGauge(METRICS.retention.name, 'int', undefined, METRICS.retention.help);
  const reviewed = meter.createGauge(METRICS.reviewLastClosed.name, 'int', undefined, METRICS.reviewLastClosed.help);
  const tags = { namespace, taskQueue };
  const base =
    `WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}' AND TaskQueue = '${taskQueue}' ` + `AND ExecutionStatus = 'Running'`;

  const refresh = async () => {
    await Promise.all(
      OPEN_STAGES.map(async (stage) => {
        const { count } = await client.workflow.count(`${base} AND Stage = '${stage}'`);
        open.set(count, { ...tags, stage });
      }),
    );
    let first: number | null = null;
    let scanned = 0;
    for await (const wf of client.workflow.list({ query: `${base} AND Stage = 'awaiting_human'` })) {
      const t = wf.startTime.getTime();
      if (first === null || t < first) first = t;
      if (++scanned >= MAX_SCANNED) break;
    }
    oldest.set(first === null ? 0 : Math.max(0, (Date.now() - first) / 1000), tags);
    const ns = await client.workflowService.describeNamespace({ namespace });
    const ttl = ns.config?.workflowExecutionRetentionTtl?.seconds;
    if (ttl !== undefined && ttl !== null) retention.set(Number(ttl), { namespace });
    if (options.lastReviewClosed) {
      const last = await options.lastReviewClosed();
      for (const review of REVIEW_KINDS) {
        const at = last[review];
        if (at) reviewed.set(Math.floor(at.getTime() / 1000), { namespace, review });
      }
    }
  };

  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const loop = async () => {
    try {
      await refresh();
    } catch (err) {
      // A visibility hiccup leaves the last values standing; the next round tries again.
      options.logger.warn({ err: (err as Error).message }, 'could not read visibility for the metrics gauges');
    }
    if (!stopped) timer = setTimeout(() => void loop(), options.intervalMs ?? 15_000).unref();
  };
  void loop();
  return {
    refresh,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
