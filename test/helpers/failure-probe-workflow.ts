/**
 * Test-only workflow: runs one activity by name on a given task queue with up to three attempts
 * (the proposal workflow's own limit) and reports the failure exactly as workflow code sees it:
 * its type, whether it was non-retryable, and why retrying stopped.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';

export interface FailureProbeResult {
  ok: boolean;
  type?: string;
  nonRetryable?: boolean;
  retryState?: string;
  message?: string;
}

export async function probeFailure(taskQueue: string, activity: string, input: unknown): Promise<FailureProbeResult> {
  const acts = proxyActivities<Record<string, (arg: unknown) => Promise<unknown>>>({
    taskQueue,
    startToCloseTimeout: '20s',
    retry: { maximumAttempts: 3, initialInterval: '50ms', backoffCoefficient: 1 },
  });
  try {
    await acts[activity]!(input);
    return { ok: true };
  } catch (err) {
    if (!(err instanceof ActivityFailure) || !(err.cause instanceof ApplicationFailure)) {
      return { ok: false, message: String(err) };
    }
    return {
      ok: false,
      type: err.cause.type ?? undefined,
      nonRetryable: Boolean(err.cause.nonRetryable),
      retryState: err.retryState,
      message: err.cause.message,
    };
  }
}
