import type { MetricMeter } from '@temporalio/common';
import type { LimitName } from '../contracts/errors';
import { meterName, METRICS } from '../contracts/metric-catalogue';

/** Counts one refusal by a per-agent limit on `meter` (`agent_judge_limit_refusals_total{limit}`). */
export function countLimitRefusal(meter: MetricMeter, limit: LimitName): void {
  const def = METRICS.limitRefusals;
  meter.createCounter(meterName(def), undefined, def.help).add(1, { limit });
}
