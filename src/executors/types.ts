import { ExecutionRefusedError } from '../contracts/errors';
import type { CompliancePolicy } from '../contracts/policy';
import { isAction, type KnownActionType, type Proposal, type ProposalOf } from '../contracts/proposal';
import type { Verdict } from '../contracts/verdict';

/** What an executor gets: exactly the approved action, its verdict, and the policy in force. */
export interface ExecutionContext {
  workflowId: string;
  proposal: Proposal;
  verdict: Verdict;
  policy: CompliancePolicy;
  /** Key that identifies this action; pass it on as an idempotency key where the far side takes one. */
  idempotencyKey: string;
  baseDir: string;
  signal: AbortSignal;
  /** The action's capability token, already verified and redeemed: passed on to the far side (webhook header). */
  capability?: string;
  /** Called once the action has really begun (the exec's process is running): recorded in heartbeats. */
  onStarted?: (detail: { pid?: number }) => void;
}

/**
 * The context's proposal as the action type this executor performs, typed. The registry routes by
 * action type, so a mismatch is a wiring bug: refuse rather than act on fields of another shape.
 */
export function proposalFor<T extends KnownActionType>(ctx: ExecutionContext, type: T): ProposalOf<T> {
  const { proposal } = ctx;
  if (!isAction(proposal, type)) {
    throw new ExecutionRefusedError(`the ${type} executor was given a ${proposal.action_type} proposal`);
  }
  return proposal;
}

export interface ExecutorOutput {
  ok: boolean;
  output?: unknown;
  error?: string;
}

/**
 * Performs one kind of action. Executors re-check their own guards (allowlists, roots) right before
 * acting, and throw ExecutionRefusedError rather than act outside them.
 */
export interface Executor {
  name: string;
  /**
   * True when running the action again after a crash is safe to decide from the target alone
   * (the target and intended content are known). A retry then confirms or completes it; a
   * non-idempotent action that may have run is never run again.
   */
  idempotent?: boolean;
  /**
   * On a retry of an idempotent action: the output when the target already holds what the action
   * meant to write (the earlier attempt finished before dying), else null and the action runs.
   */
  confirm?(ctx: ExecutionContext): Promise<ExecutorOutput | null>;
  run(ctx: ExecutionContext): Promise<ExecutorOutput>;
}

/** Executors by action type; the MCP proxy (seed 000 §4) plugs its own in here. */
export type ExecutorRegistry = Record<string, Executor>;
