import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { Context } from '@temporalio/activity';
import type { ExecutionResult } from '../contracts/status';
import { FailureType, UNCERTAIN_EXPLANATION } from '../contracts/lifecycle';
import { executionHeartbeatTimeoutMs } from '../contracts/policy';
import { ApplicationFailure } from '@temporalio/common';
import { BadInputError, ExecutionRefusedError, LimitExceededError } from '../contracts/errors';
import { countLimitRefusal } from '../metrics/limit-refusals';
import { workflowIdNamedBy } from '../contracts/workflow-ids';
import { builtinExecutors, executorFor, ExecutionLedger, type ExecutorRegistry } from '../executors';
import { hardRules } from '../guards/rules';
import { actionDigest, executorAudience } from '../contracts/capability';
import { verifyCapability } from '../identity/capability';
import { PROPOSAL_WORKFLOW_TYPE } from '../wire-names';
import type { ExecuteInput, ExecutionProgress, ExecutorActivities } from './types';

export interface ExecutorDeps {
  /** Directory relative paths resolve against. */
  baseDir: string;
  /** Where the execution ledger lives (at-most-once bookkeeping). */
  stateDir: string;
  executors?: ExecutorRegistry;
  fetch?: typeof fetch;
  /**
   * Confirms that a chosen proposal_id is reserved for the proposal run `workflowId` (reserving it when nobody has),
   * or throws {@link BadInputError} naming the proposal that holds it. The submitting client reserves the id beside the
   * start, not before it, so the executor confirms before it acts (docs/performance.md §6). Without it, an action
   * submitted under a chosen proposal_id is refused.
   */
  confirmReservation?: (proposalId: string, workflowId: string) => Promise<void>;
}

/**
 * Keeps telling Temporal this attempt is alive, with what it has done so far: a killed executor
 * stops heartbeating and is noticed within the policy's heartbeat timeout, and the retry reads the
 * last details (which host, whether the action had started, its result once finished).
 */
function heartbeater(ctx: Context, timeoutMs: number, first: ExecutionProgress) {
  let progress = first;
  ctx.heartbeat(progress);
  // The SDK throttles heartbeats itself (to a share of the timeout); beating often costs nothing.
  const timer = setInterval(() => ctx.heartbeat(progress), Math.max(200, Math.min(1000, timeoutMs / 4)));
  return {
    set(next: ExecutionProgress) {
      progress = next;
      ctx.heartbeat(progress);
    },
    stop() {
      clearInterval(timer);
    },
  };
}

/**
 * The executor worker's activities: the only process that acts. It checks the verdict and the hard
 * rules again right before acting, so a forged or stale approval cannot widen what runs.
 *
 * At most once: a retry (Temporal's attempt > 1, or an entry in this host's ledger) never guesses.
 * An earlier result (ledger or last heartbeat) is returned as is; an idempotent write is confirmed
 * against its target or completed; a non-idempotent action that may have started is not run again
 * and ends `uncertain`. Only when the last heartbeat shows the earlier attempt ran on this host and
 * the ledger holds no entry (it is written before acting) is it known not to have started.
 */
export function createExecutorActivities(deps: ExecutorDeps): ExecutorActivities {
  const registry = deps.executors ?? builtinExecutors();
  const ledgerDir = resolve(`${deps.stateDir}/executions`);
  const ledger = new ExecutionLedger(ledgerDir);
  const host = `${hostname()}:${ledgerDir}`;

  return {
    async execute(input: ExecuteInput): Promise<ExecutionResult> {
      const { proposal, verdict, policy, shadow } = input;
      const started = new Date();
      const executor = executorFor(registry, policy, proposal.action_type, deps.fetch);
      const base = { shadow, started_at: started.toISOString() };
      if (!executor) {
        return { ...base, status: 'succeeded', executor: 'none', finished_at: new Date().toISOString() };
      }
      const refuse = (why: string): ExecutionResult => ({
        ...base,
        status: 'refused',
        executor: executor.name,
        error: why,
        finished_at: new Date().toISOString(),
      });
      if (verdict.proposal_id !== proposal.proposal_id) return refuse('verdict belongs to another proposal');
      if (verdict.verdict !== 'APPROVE' && !shadow) return refuse(`verdict is ${verdict.verdict}, not APPROVE`);
      const finding = hardRules(proposal, { policy, baseDir: deps.baseDir });
      if (finding) return refuse(`${finding.rule}: ${finding.reason}`);

      const ctx = Context.current();
      // Seed 000 §8: act only on a token for exactly this action, redeemed once through its workflow, which records
      // the redemption as it schedules this activity. Expiry is judged at the time the workflow asked for the action,
      // so a retry is not refused for the time the retry took.
      const token = input.capability;
      if (!token) return refuse('no capability token came with this action; agent-judge acts only on one');
      const check = verifyCapability(token, {
        issuers: policy.spec.capabilities?.issuers ?? {},
        nowMs: ctx.info.scheduledTimestampMs,
        audience: executorAudience(proposal.action_type),
        workflowId: input.workflow_id,
        actionSha256: actionDigest(proposal),
      });
      if (!check.ok) return refuse(`capability token refused: ${check.refusal.reason}`);
      // Who scheduled the activity is what Temporal says, not the input (the scheduler's word): a proposal run under
      // the token's workflow id. The token's expiry, judged at scheduling, bounds a later run under that id
      // (docs/capabilities.md).
      const by = ctx.info.workflowExecution?.workflowId ?? 'no workflow';
      if (by !== input.workflow_id || ctx.info.workflowType !== PROPOSAL_WORKFLOW_TYPE) {
        return refuse(
          `capability token refused: this activity was scheduled by ${ctx.info.workflowType} ${by}, ` +
            `not by the token's proposal run ${input.workflow_id}`,
        );
      }

      // A chosen proposal_id is reserved beside the run's start: act only once it is confirmed this run's. Held by
      // other content, the run is withdrawn (a non-retryable failure the workflow reads); unreachable, retried.
      if (workflowIdNamedBy(proposal.proposal_id) === null) {
        if (!deps.confirmReservation)
          return refuse(`this executor cannot confirm that proposal_id ${proposal.proposal_id} is this proposal's`);
        try {
          await deps.confirmReservation(proposal.proposal_id, input.workflow_id);
        } catch (err) {
          if (err instanceof BadInputError)
            throw ApplicationFailure.nonRetryable(err.message, FailureType.ProposalIdTaken);
          throw err;
        }
      }

      const { attempt } = ctx.info;
      const earlier = ctx.info.heartbeatDetails as ExecutionProgress | undefined;
      const beat = heartbeater(ctx, executionHeartbeatTimeoutMs(policy), { phase: 'not_started', host });
      const uncertain = (why: string): ExecutionResult => ({
        ...base,
        status: 'uncertain',
        executor: executor.name,
        error: `${why}; ${UNCERTAIN_EXPLANATION}`,
        finished_at: new Date().toISOString(),
      });
      const key = ExecutionLedger.keyFor(input.workflow_id, proposal);
      const done = async (result: ExecutionResult): Promise<ExecutionResult> => {
        await ledger.finish(key, result);
        beat.set({ phase: 'finished', host, result });
        return result;
      };
      try {
        const entry = await ledger.begin(key, started);
        if (!entry.begun && entry.entry.state === 'done') return entry.entry.result;
        if (earlier?.phase === 'finished' && earlier.result) return await done(earlier.result);
        const retry = !entry.begun || attempt > 1;
        const ctxFor = {
          workflowId: input.workflow_id,
          proposal,
          verdict,
          policy,
          idempotencyKey: key,
          baseDir: deps.baseDir,
          capability: token,
          signal: ctx.cancellationSignal,
          onStarted: ({ pid }: { pid?: number }) =>
            beat.set({ phase: 'started', host, ...(pid !== undefined ? { pid } : {}) }),
        };
        if (retry && executor.idempotent && executor.confirm) {
          const confirmed = await executor.confirm(ctxFor);
          if (confirmed) {
            return await done({
              ...base,
              status: 'succeeded',
              executor: executor.name,
              output: confirmed.output,
              finished_at: new Date().toISOString(),
            });
          }
        } else if (retry && !executor.idempotent) {
          const where = earlier ? ` on ${earlier.host}` : '';
          const pid = earlier?.pid !== undefined ? ` (pid ${earlier.pid})` : '';
          if (!entry.begun) {
            return await done(
              uncertain(`an earlier attempt on this host started this action${pid} and never reported back`),
            );
          }
          // No entry here: the earlier attempt did not start on this host. Known not started only
          // when its heartbeat says it ran on this host and had not started (a heartbeat that says
          // `started` with no entry here means the ledger was lost); otherwise another host may have acted.
          if (!(earlier && earlier.host === host && earlier.phase === 'not_started')) {
            return await done(
              uncertain(
                earlier?.phase === 'started'
                  ? `attempt ${attempt - 1}${where} started this action${pid} and never reported back`
                  : `attempt ${attempt - 1}${where} may have started this action and never reported back`,
              ),
            );
          }
        }

        let result: ExecutionResult;
        try {
          const out = await executor.run(ctxFor);
          result = {
            ...base,
            status: out.ok ? 'succeeded' : 'failed',
            executor: executor.name,
            ...(out.output !== undefined ? { output: out.output } : {}),
            ...(out.error ? { error: out.error } : {}),
            finished_at: new Date().toISOString(),
          };
        } catch (err) {
          if (err instanceof ExecutionRefusedError) result = refuse(err.message);
          else if (err instanceof LimitExceededError) {
            countLimitRefusal(ctx.metricMeter, err.limit);
            result = refuse(err.message);
          } else if (executor.idempotent) {
            result = {
              ...base,
              status: 'failed',
              executor: executor.name,
              error: `executor failed: ${(err as Error).message}`,
              finished_at: new Date().toISOString(),
            };
          } else result = uncertain(`the executor failed mid-action: ${(err as Error).message}`);
        }
        return await done(result);
      } finally {
        beat.stop();
      }
    },
  };
}
