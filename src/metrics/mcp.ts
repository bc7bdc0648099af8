import type { MetricMeter } from '@temporalio/common';
import type { LimitName } from '../contracts/errors';
import { labelCombinations, meterName, METRICS } from '../contracts/metric-catalogue';
import type { McpDropReason } from '../contracts/mcp-drop-reasons';
import { countLimitRefusal } from './limit-refusals';

/** What the MCP proxy counts (`agent-judge mcp --metrics`): its refusals, each a series that starts at zero. */
export interface McpCounters {
  dropped(reason: McpDropReason): void;
  sessionRefused(): void;
  limitRefused(limit: LimitName): void;
}

/** Counters on `meter` (the SDK runtime's, exported by `--metrics`), created at zero so `rate()` sees the first. */
export function mcpCounters(meter: MetricMeter): McpCounters {
  const dropped = meter.createCounter(
    meterName(METRICS.mcpMessagesDropped),
    undefined,
    METRICS.mcpMessagesDropped.help,
  );
  const sessions = meter.createCounter(
    meterName(METRICS.mcpSessionsRefused),
    undefined,
    METRICS.mcpSessionsRefused.help,
  );
  const limits = meter.createCounter(meterName(METRICS.limitRefusals), undefined, METRICS.limitRefusals.help);
  for (const tags of labelCombinations(METRICS.mcpMessagesDropped.labels)) dropped.add(0, tags);
  sessions.add(0);
  for (const tags of labelCombinations(METRICS.limitRefusals.labels)) limits.add(0, tags);
  return {
    dropped: (reason) => dropped.add(1, { reason }),
    sessionRefused: () => sessions.add(1),
    limitRefused: (limit) => countLimitRefusal(meter, limit),
  };
}
