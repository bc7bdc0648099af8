/**
 * Which read failures mean "the server no longer has this run": the archive and `audit show` then read the archive
 * instead of failing. `start-dev` says NOT_FOUND; a real cluster with archival says INVALID_ARGUMENT.
 */
import { status } from '@grpc/grpc-js';
import { ServiceError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { isRunGone } from '../../src/audit/archive';

/** An error shaped as @grpc/grpc-js makes it: `code`, `details`, and a message starting with both. */
function grpcError(code: status, details: string): Error {
  return Object.assign(new Error(`${code} ${status[code]}: ${details}`), { code, details });
}

const PAST_RETENTION = 'Workflow execution history not found. It may have passed retention period.';

describe('isRunGone', () => {
  it('is true for NOT_FOUND, bare or wrapped in the SDK ServiceError', () => {
    expect(isRunGone(grpcError(status.NOT_FOUND, 'workflow not found'))).toBe(true);
    expect(isRunGone(new ServiceError('fetch failed', { cause: grpcError(status.NOT_FOUND, 'gone') }))).toBe(true);
  });

  it("is true for a cluster's INVALID_ARGUMENT past retention, bare or wrapped", () => {
    expect(isRunGone(grpcError(status.INVALID_ARGUMENT, PAST_RETENTION))).toBe(true);
    expect(
      isRunGone(new ServiceError('fetch failed', { cause: grpcError(status.INVALID_ARGUMENT, PAST_RETENTION) })),
    ).toBe(true);
  });

  it('is false for any other INVALID_ARGUMENT and for unavailable servers', () => {
    expect(isRunGone(grpcError(status.INVALID_ARGUMENT, 'bad run id'))).toBe(false);
    expect(isRunGone(grpcError(status.UNAVAILABLE, 'connection refused'))).toBe(false);
    expect(isRunGone(new Error('boom'))).toBe(false);
  });
});
