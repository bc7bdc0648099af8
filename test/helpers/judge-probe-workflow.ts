/**
 * Test-only workflow: calls an activity by name on a given task queue, once, and reports what
 * happened. The isolation test uses it to knock on the judge queue with executor activity names.
 */
import { proxyActivities } from '@temporalio/workflow';

export interface ProbeResult {
  ok: boolean;
  result?: unknown;
  error?: string;
}

export async function probeActivity(taskQueue: string, activity: string, input: unknown): Promise<ProbeResult> {
  const acts = proxyActivities<Record<string, (arg: unknown) => Promise<unknown>>>({
    taskQueue,
    startToCloseTimeout: '20s',
    retry: { maximumAttempts: 1 },
  });
  try {
    return { ok: true, result: await acts[activity]!(input) };
  } catch (err) {
    const e = err as { message?: string; cause?: { message?: string; type?: string } };
    return { ok: false, error: `${e.cause?.type ?? ''}: ${e.cause?.message ?? e.message ?? String(err)}` };
  }
}
