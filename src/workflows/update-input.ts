/** Reading an Update's argument in workflow code: shared by the proposal, review and grant workflows. */
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import { FailureType } from '../contracts/lifecycle';
import { describeIssues } from '../contracts/zod-error';

/**
 * An Update's argument as its schema reads it, or a non-retryable `BadInput` failure that refuses
 * the Update. Never a ZodError: thrown from a handler, that fails the workflow task, which retries
 * forever. Validators and handlers both read their input through this one function, so a handler
 * works with exactly what its validator accepted (and stays safe on replay, where validators do
 * not run).
 */
export function readUpdateInput<S extends z.ZodType>(schema: S, what: string, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw ApplicationFailure.nonRetryable(describeIssues(what, parsed.error.issues), FailureType.BadInput);
  return parsed.data;
}
