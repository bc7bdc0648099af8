/**
 * The executor's heartbeat timeout, apart from the policy schema: the proposal workflow computes it on every run, and
 * the SDK evaluates a workflow's modules afresh for each run (docs/performance.md).
 */
import { type Duration, durationMs } from './duration';

/**
 * The executor's heartbeat timeout in milliseconds. Policies recorded in workflow histories before
 * the field existed carry none: they get the default, so old runs replay unchanged.
 */
export function executionHeartbeatTimeoutMs(policy: { spec: object }): number {
  const spec = policy.spec as { execution?: { heartbeatTimeout?: Duration } };
  return durationMs(spec.execution?.heartbeatTimeout ?? '10s');
}
