import type { CompliancePolicy } from '../contracts/policy';
import { execExecutor } from './exec';
import { fileExecutor } from './file';
import { memoryExecutor } from './memory';
import type { Executor, ExecutorRegistry } from './types';
import { webhookExecutor } from './webhook';

export type { Executor, ExecutorRegistry, ExecutionContext, ExecutorOutput } from './types';
export { ExecutionLedger } from './ledger';

/** The built-in executors: memory, files and exec. */
export function builtinExecutors(): ExecutorRegistry {
  return { memory_write: memoryExecutor, file_write: fileExecutor, exec: execExecutor };
}

/**
 * The executor for an action type: a registered one, else the webhook when the policy routes the
 * type to one, else none (the proposal ends `approved` and the caller performs it).
 */
export function executorFor(
  registry: ExecutorRegistry,
  policy: CompliancePolicy,
  actionType: string,
  fetchImpl: typeof fetch = fetch,
): Executor | null {
  if (Object.prototype.hasOwnProperty.call(registry, actionType)) return registry[actionType] ?? null;
  if (policy.spec.webhook.routes[actionType]) return webhookExecutor(fetchImpl);
  return null;
}
