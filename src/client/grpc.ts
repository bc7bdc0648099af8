import { status } from '@grpc/grpc-js';
import { isGrpcServiceError } from '@temporalio/client';

export { status as GrpcStatus };

/**
 * The gRPC status code behind a client error: the error itself, or the cause the SDK wrapped it
 * in (`ServiceError`, `WorkflowNotFoundError`...). Deciding by code, not by message text, keeps the
 * client right when the server rewords a message.
 */
export function grpcCode(err: unknown): status | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (isGrpcServiceError(e)) return e.code;
  }
  return undefined;
}
