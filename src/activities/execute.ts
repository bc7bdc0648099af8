import { Context } from '@temporalio/activity';
import type { ExecutionResult } from '../contracts/status';
import { ExecutionRefusedError } from '../contracts/errors';
import { builtinExecutors, executorFor, ExecutionLedger, type ExecutorRegistry } from '../executors';
import { hardRules } from '../guards/rules';
import type { ExecuteInput, ExecutorActivities } from './types';

export interface ExecutorDeps {
  /** Directory relative paths resolve against. */
  baseDir: string;
  /** Where the execution ledger lives (at-most-once bookkeeping). */
  stateDir: string;
  executors?: ExecutorRegistry;
  fetch?: typeof fetch;
}

/**
 * The executor worker's activities: the only process that acts. It checks the verdict and the hard
 * rules again right before acting, so a forged or stale approval cannot widen what runs.
 */
export function createExecutorActivities(deps: ExecutorDeps): ExecutorActivities {
  const registry = deps.executors ?? builtinExecutors();
  const ledger = new ExecutionLedger(`${deps.stateDir}/executions`);

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

      const key = ExecutionLedger.keyFor(input.workflow_id, proposal);
      const claim = await ledger.claim(key, started);
      if (!claim.claimed) {
        if (claim.entry.state === 'done') return claim.entry.result;
        return {
          ...base,
          status: 'unknown',
          executor: executor.name,
          error: 'an earlier attempt started this action and did not report back; not running it twice',
          finished_at: new Date().toISOString(),
        };
      }
      let result: ExecutionResult;
      try {
        const out = await executor.run({
          workflowId: input.workflow_id,
          proposal,
          verdict,
          policy,
          idempotencyKey: key,
          baseDir: deps.baseDir,
          signal: Context.current().cancellationSignal,
        });
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
        else {
          result = {
            ...base,
            status: 'unknown',
            executor: executor.name,
            error: `executor failed mid-action: ${(err as Error).message}`,
            finished_at: new Date().toISOString(),
          };
        }
      }
      await ledger.finish(key, result);
      return result;
    },
  };
}
