/**
 * The activities a proposal run calls, as the SDK's typed stubs (activities come in as types only). Options are not
 * part of the command sequence replay checks.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ExecutorActivities, JudgeActivities, WorkflowActivities } from '../../activities/types';
import { executionHeartbeatTimeoutMs } from '../../contracts/execution-timeout';
import { judgeActivityTimeoutMs } from '../../contracts/judge-timeout';
import { NON_RETRYABLE_FAILURE_TYPES } from '../../contracts/lifecycle';
import type { CompliancePolicy } from '../../contracts/policy';
import type { TaskQueues } from '../../names';

/** The workflow worker's own activities, run in its process: the policy snapshot, tokens, grants. */
export const local = proxyLocalActivities<WorkflowActivities>({ startToCloseTimeout: '10s' });

/** Telling people (escalations, reminders, resolutions) and counting rejections. */
export const notify = proxyActivities<WorkflowActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 5, initialInterval: '1s' },
});

/** The judge's and the executors' activities, on the task queues the policy snapshot names. */
export function queueActivities(
  policy: CompliancePolicy,
  taskQueues: Pick<TaskQueues, 'judge' | 'execute'>,
): {
  judge: ReturnType<typeof proxyActivities<JudgeActivities>>;
  checkRules: JudgeActivities['checkRules'];
  executor: ReturnType<typeof proxyActivities<ExecutorActivities>>;
} {
  const judge = proxyActivities<JudgeActivities>({
    taskQueue: taskQueues.judge,
    // The model's own budget plus evidence lookups; the judge never hangs a proposal. With no judge
    // worker polling at all, scheduleToClose ends the wait and a person decides (see judgeOnce).
    startToCloseTimeout: judgeActivityTimeoutMs(policy),
    scheduleToCloseTimeout: judgeActivityTimeoutMs(policy) * 2,
    retry: { maximumAttempts: 3, nonRetryableErrorTypes: [...NON_RETRYABLE_FAILURE_TYPES] },
  });
  const checkRules = proxyActivities<JudgeActivities>({
    taskQueue: taskQueues.judge,
    // Pure rules, no model: quick, or no judge worker polls (then the approver is told at once, nothing recorded).
    startToCloseTimeout: '30s',
    scheduleToCloseTimeout: '1m',
    retry: { maximumAttempts: 3, nonRetryableErrorTypes: [...NON_RETRYABLE_FAILURE_TYPES] },
  }).checkRules;
  const executor = proxyActivities<ExecutorActivities>({
    taskQueue: taskQueues.execute,
    startToCloseTimeout: '1h',
    scheduleToCloseTimeout: '2h',
    // Executors heartbeat while they act: a killed executor is noticed within seconds, not at the
    // hour's end, and the action is retried on a live one. (Activity options are not part of the
    // command sequence replay checks.)
    heartbeatTimeout: executionHeartbeatTimeoutMs(policy),
    // A retry never guesses: it confirms or completes an idempotent write, and ends a
    // non-idempotent action that may have run as `uncertain` (see the execute activity).
    retry: { maximumAttempts: 3, nonRetryableErrorTypes: [...NON_RETRYABLE_FAILURE_TYPES] },
  });
  return { judge, checkRules, executor };
}
