/** A refusal (src/contracts/refusal.ts) as workflow code throws it. */
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../contracts/lifecycle';
import type { Refusal } from '../contracts/refusal';

/**
 * The non-retryable failure a refusal becomes in an Update validator or a workflow: the reason as its message, the
 * code as its one detail, `BadInput` unless the workflow names another type (the circle registry's `CircleRefused`).
 * Never a plain Error: thrown from a handler, that fails the workflow task, which retries forever.
 */
export function refusalFailure(r: Refusal, prefix = '', type: FailureType = FailureType.BadInput): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`${prefix}${r.reason}`, type, r.code);
}
