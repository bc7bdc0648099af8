/**
 * The activity boundary's one error mapping: an error of our family (src/contracts/errors.ts)
 * leaves an activity as an ApplicationFailure of the type its class names, non-retryable when no
 * retry can fix it. Without it the SDK reports the class name (`BadInputError`) and retries
 * everything, so a permanent failure is retried until the workflow's attempts run out.
 *
 * An inbound interceptor registered by the worker, rather than a wrapper in each factory: it
 * covers every activity a worker registers (ours, the circle registry's, any added later), and a
 * new factory cannot forget it.
 */
import { ApplicationFailure } from '@temporalio/common';
import type {
  ActivityExecuteInput,
  ActivityInboundCallsInterceptor,
  ActivityInterceptorsFactory,
  Next,
} from '@temporalio/worker';
import { AgentJudgeError } from '../contracts/errors';

/** The ApplicationFailure an error becomes when it leaves an activity; other errors pass as they are. */
export function toActivityFailure(err: unknown): unknown {
  if (!(err instanceof AgentJudgeError)) return err;
  return ApplicationFailure.create({
    message: err.message,
    type: err.failureType,
    nonRetryable: !err.retryable,
    cause: err.cause instanceof Error ? err.cause : undefined,
  });
}

class FailureMappingInterceptor implements ActivityInboundCallsInterceptor {
  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    try {
      return await next(input);
    } catch (err) {
      throw toActivityFailure(err);
    }
  }
}

/** Pass as `interceptors.activity` to every Worker that runs our activities. */
export const activityInterceptors: ActivityInterceptorsFactory[] = [
  () => ({ inbound: new FailureMappingInterceptor() }),
];
