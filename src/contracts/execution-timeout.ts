/**
 * The executor's heartbeat timeout, apart from the policy schema: the proposal workflow computes it on every run, and
 * the SDK evaluates a workflow's modules afresh for each run (docs/performance.md).
 */
import { type Duration, durationMs } from './duration';

/**
 * The executor's heartbeat timeout in milliseconds. The policy schema defaults the field; the fallback here only
 * serves callers that pass a policy object not read through the schema (tests, benchmarks).
 */
export function executionHeartbeatTimeoutMs(policy: { spec: object }): number {
  const spec = policy.spec as { execution?: { heartbeatTimeout?: Duration } };
  return durationMs(spec.execution?.heartbeatTimeout ?? '10s');
}
