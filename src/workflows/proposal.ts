/**
 * One workflow per proposal: validate -> tier -> (pass | pattern check | judge | human) -> clarify
 * rounds -> escalation -> execution of exactly the approved action. The history is the audit trail.
 * Deterministic code only: activities are imported as types.
 */
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { JudgeActivities, ExecutorActivities, WorkflowActivities } from '../activities/types';
import { ClarificationSchema, HumanDecisionSchema } from '../contracts/messages';
import { durationMs } from '../contracts/policy';
import { judgeActivityTimeoutMs } from '../contracts/judge-settings';
import { safeParseProposal, searchableTarget, targetKey } from '../contracts/proposal';
import { type ProposalOutcome, outcomeOf, type Stage } from '../contracts/status';
import type { Verdict } from '../contracts/verdict';
import { describeIssues } from '../contracts/zod-error';
import { lightweightCheck } from '../policy/patterns';
import type { AnnouncementRef, EscalationNotice } from '../contracts/escalation';
import { isShadow, quorumFor, tierFor } from '../policy/classify';
import { awaitSettledUpdate, clarifyUpdate, humanDecisionUpdate, SA, statusQuery } from '../names';
import { ProposalState } from './proposal-state';

/** The innermost message of an activity failure, for verdict reasons and execution errors. */
function failureMessage(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  while (e && typeof e === 'object' && e.cause) e = e.cause as typeof e;
  return String(e?.message ?? err).slice(0, 500);
}

export interface ProposalWorkflowInput {
  proposal: unknown;
}

const local = proxyLocalActivities<WorkflowActivities>({ startToCloseTimeout: '10s' });
const notify = proxyActivities<WorkflowActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 5, initialInterval: '1s' },
});

export async function proposalWorkflow(input: ProposalWorkflowInput): Promise<ProposalOutcome> {
  // Validate again where the workflow starts: a client that skipped validation starts nothing useful.
  const parsed = safeParseProposal(input.proposal);
  if (!parsed.ok) throw ApplicationFailure.nonRetryable(parsed.error, 'BadInput');

  // Handlers first, before any await: an Update that arrives with the start must find them.
  let current: ProposalState | undefined;
  const now = () => new Date(Date.now()).toISOString();
  setHandler(statusQuery, () => {
    if (!current) throw new Error('the proposal is still starting; ask again in a moment');
    return current.snapshot();
  });
  setHandler(awaitSettledUpdate, async () => {
    await condition(
      () => current !== undefined && current.settledCount > 0 && !['judging', 'executing'].includes(current.stage),
    );
    return current!.snapshot();
  });
  setHandler(
    clarifyUpdate,
    async (clarification) => {
      const s = current!;
      const before = s.settledCount;
      s.pendingClarification = ClarificationSchema.parse(clarification);
      await condition(() => s.settledCount > before);
      return s.snapshot();
    },
    {
      // Validators run synchronously and refuse before anything is written to history.
      validator: (clarification) => {
        const parsedC = ClarificationSchema.safeParse(clarification);
        if (!parsedC.success) throw new Error(describeIssues('clarification', parsedC.error.issues));
        if (!current) throw new Error('the proposal is still starting');
        const refusal = current.refuseClarification(parsedC.data);
        if (refusal) throw new Error(refusal);
      },
    },
  );
  setHandler(
    humanDecisionUpdate,
    async (decision) => {
      const s = current!;
      const before = s.settledCount;
      const d = HumanDecisionSchema.parse(decision);
      const result = s.addDecision(d, now());
      // A partial quorum changes nothing else: answer at once. Otherwise wait for the effect.
      if (result !== 'pending') await condition(() => s.settledCount > before);
      return s.snapshot();
    },
    {
      validator: (decision) => {
        const parsedD = HumanDecisionSchema.safeParse(decision);
        if (!parsedD.success) throw new Error(describeIssues('decision', parsedD.error.issues));
        if (!current) throw new Error('the proposal is still starting');
        const refusal = current.refuseDecision(parsedD.data, Date.now());
        if (refusal) throw new Error(refusal);
      },
    },
  );

  const snapshot = await local.policySnapshot();
  const { policy, taskQueues } = snapshot;
  // Histories recorded before `executable` existed carry none: the patch below keeps them replaying.
  const executable = snapshot.executable ?? [];
  const judge = proxyActivities<JudgeActivities>({
    taskQueue: taskQueues.judge,
    // The model's own budget plus evidence lookups; the judge never hangs a proposal. With no judge
    // worker polling at all, scheduleToClose ends the wait and a person decides (see judgeOnce).
    startToCloseTimeout: judgeActivityTimeoutMs(policy),
    scheduleToCloseTimeout: judgeActivityTimeoutMs(policy) * 2,
    retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['BadInput'] },
  });
  const executor = proxyActivities<ExecutorActivities>({
    taskQueue: taskQueues.execute,
    startToCloseTimeout: '1h',
    scheduleToCloseTimeout: '2h',
    // The executor's ledger makes retries safe: an action never runs twice.
    retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['BadInput', 'ExecutionRefused'] },
  });

  const proposal = parsed.value;
  const tier = tierFor(policy, proposal.action_type);
  const shadow = isShadow(policy, proposal.action_type);
  const state = new ProposalState(proposal, policy, workflowInfo().workflowId, tier, shadow, quorumFor(policy, tier));
  current = state;
  let refs: AnnouncementRef[] = [];

  const setStage = (stage: Stage) => {
    state.setStage(stage);
    upsertSearchAttributes([{ key: SA.Stage, value: stage }]);
  };

  upsertSearchAttributes([
    { key: SA.Tier, value: tier },
    { key: SA.Stage, value: 'judging' },
  ]);

  const record = (v: Verdict) => {
    const verdict = { ...v, decided_at: v.decided_at ?? now() };
    state.verdicts.push(verdict);
    upsertSearchAttributes([{ key: SA.Verdict, value: verdict.verdict }]);
    return verdict;
  };
  const mkVerdict = (
    verdict: Verdict['verdict'],
    reason: string,
    decidedBy: Verdict['decided_by'],
    extra: Partial<Verdict> = {},
  ): Verdict => ({
    proposal_id: proposal.proposal_id,
    verdict,
    reason,
    constraints: { require_human_review: false },
    escalation: null,
    confidence: 1,
    decided_by: decidedBy,
    tier,
    decided_at: now(),
    ...extra,
  });

  /** One judgement of the proposal as it currently stands. */
  const judgeOnce = async (): Promise<Verdict> => {
    switch (tier) {
      case 'no-judge':
        return mkVerdict('APPROVE', `tier no-judge: ${proposal.action_type} needs no review`, 'policy');
      case 'lightweight-approval': {
        const finding = lightweightCheck(state.proposal, policy);
        return mkVerdict(finding.verdict, finding.reason, 'rules', { rule: finding.rule });
      }
      case 'full-judge-review':
        try {
          return await judge.judge({ proposal: state.proposal, tier, round: state.clarifyRounds, policy });
        } catch (err) {
          // No judge answered (worker down, retries exhausted): confidence 0 sends it to a person.
          log.error('judge activity failed', { error: String(err) });
          return mkVerdict('CLARIFY', `the judge could not be reached: ${failureMessage(err)}`, 'judge', {
            confidence: 0,
            rule: 'judge.unavailable',
            constraints: { require_human_review: true },
          });
        }
      case 'human-only':
        throw ApplicationFailure.nonRetryable('human-only proposals are never judged', 'Internal');
    }
  };

  const reject = async (v: Verdict): Promise<void> => {
    setStage('rejected');
    try {
      const r = await notify.recordRejection({
        workflow_id: state.workflowId,
        target: searchableTarget(state.proposal),
      });
      if (r.flag) {
        state.auditFlag = true;
        upsertSearchAttributes([{ key: SA.AuditFlag, value: true }]);
        log.warn('audit flag: repeated rejections on one target', {
          target: targetKey(state.proposal),
          recent: r.recent,
        });
      }
    } catch (err) {
      log.error('could not count recent rejections', { error: String(err) });
    }
    log.info('proposal rejected', { decided_by: v.decided_by, rule: v.rule ?? null });
  };

  const execute = async (v: Verdict): Promise<void> => {
    // No executor for this type here: the caller performs it, no round trip to the executor queue.
    // (patched: runs recorded before this check still scheduled the execute activity.)
    if (!executable.includes(state.proposal.action_type) && patched('skip-execute-without-executor')) {
      setStage('approved');
      return;
    }
    setStage('executing');
    const startedAt = now();
    try {
      state.execution = await executor.execute({
        workflow_id: state.workflowId,
        proposal: state.proposal,
        verdict: v,
        shadow,
        policy,
      });
    } catch (err) {
      // The executor never reported back: the action may or may not have run.
      state.execution = {
        status: 'unknown',
        executor: 'unreachable',
        error: `the executor did not report back: ${failureMessage(err)}`,
        shadow,
        started_at: startedAt,
        finished_at: now(),
      };
    }
    if (state.execution.executor === 'none') {
      state.execution = null;
      setStage('approved');
    } else {
      setStage(state.execution.status === 'succeeded' ? 'executed' : 'failed');
    }
  };

  /** Escalation: record the dispute, tell people, wait for a decision or the deadline. */
  const escalate = async (v: Verdict | null): Promise<Verdict> => {
    const timeoutMs = durationMs(policy.spec.escalation.timeout);
    state.dispute = {
      reason:
        v === null
          ? `tier ${tier}: a person must decide`
          : v.escalation
            ? v.escalation.reason
            : v.confidence < policy.spec.thresholds.human
              ? `judge unsure (confidence ${v.confidence.toFixed(2)} is below ${policy.spec.thresholds.human})`
              : 'the judge asked for human review',
      actor_position: state.proposal.justification,
      judge_position: v ? v.reason : 'no judge review for this tier',
      judge_confidence: v ? v.confidence : null,
    };
    state.deadlines.human = new Date(Date.now() + timeoutMs).toISOString();
    setStage('awaiting_human');
    const notice: EscalationNotice = {
      workflow_id: state.workflowId,
      proposal: state.proposal,
      tier,
      verdict: v,
      dispute: state.dispute,
      deadline: state.deadlines.human,
      approvers: policy.spec.escalation.approvers,
      approvals_needed: state.approvalsNeeded,
    };
    try {
      refs = await notify.announceEscalation(notice);
    } catch (err) {
      // People can still decide through the CLI; a broken channel must not lose the proposal.
      log.error('escalation announcement failed', { error: String(err) });
    }
    const reminderShare = policy.spec.escalation.reminderAt;
    let decided: boolean;
    if (reminderShare > 0 && reminderShare < 1) {
      decided = await condition(() => state.humanWaitOver(), Math.round(timeoutMs * reminderShare));
      if (!decided) {
        await notify
          .announceReminder({ notice, refs, approvals: state.approvals() })
          .catch((err) => log.error('reminder failed', { error: String(err) }));
        decided = await condition(
          () => state.humanWaitOver(),
          Math.max(1, timeoutMs - Math.round(timeoutMs * reminderShare)),
        );
      }
    } else {
      decided = await condition(() => state.humanWaitOver(), timeoutMs);
    }
    state.deadlines.human = null;
    if (!decided) {
      return mkVerdict(
        'REJECT',
        `no human decision before the deadline (${policy.spec.escalation.timeout})`,
        'timeout',
      );
    }
    const rejecter = state.decisions.find((d) => d.decision === 'reject');
    if (rejecter) {
      return mkVerdict('REJECT', rejecter.reason ?? `rejected by ${rejecter.approver}`, `human:${rejecter.approver}`);
    }
    const approvals = state.approvals();
    const last = approvals[approvals.length - 1]!;
    return mkVerdict(
      'APPROVE',
      last.reason ?? `approved by ${approvals.map((a) => a.approver).join(', ')}`,
      `human:${last.approver}`,
      { constraints: state.latest?.constraints ?? { require_human_review: false } },
    );
  };

  // The decision loop: judge, then clarify / escalate / reject / execute.
  if (tier === 'human-only') {
    const final = record(await escalate(null));
    if (final.verdict === 'APPROVE') await execute(final);
    else await reject(final);
  }
  while (tier !== 'human-only') {
    setStage('judging');
    const verdict = record(await judgeOnce());
    if (shadow) {
      // Shadow mode (seed 000 §7 phase 2): the verdict is recorded, not enforced.
      log.info('shadow mode: executing regardless of the verdict', { verdict: verdict.verdict });
      await execute(verdict);
      break;
    }
    const step = state.route(verdict);
    if (step === 'execute') {
      await execute(verdict);
      break;
    }
    if (step === 'reject') {
      await reject(verdict);
      break;
    }
    if (step === 'escalate') {
      const final = record(await escalate(verdict));
      if (final.verdict === 'APPROVE') await execute(final);
      else await reject(final);
      break;
    }
    // CLARIFY
    if (!state.canClarify()) {
      await reject(
        record(
          mkVerdict(
            'REJECT',
            `still unclear after ${state.clarifyRounds} clarify round(s): ${verdict.reason}`,
            'rules',
            {
              rule: 'clarify.max-rounds',
            },
          ),
        ),
      );
      break;
    }
    const clarifyMs = durationMs(policy.spec.clarify.timeout);
    state.deadlines.clarification = new Date(Date.now() + clarifyMs).toISOString();
    setStage('awaiting_clarification');
    const answered = await condition(() => state.pendingClarification !== null, clarifyMs);
    state.deadlines.clarification = null;
    if (!answered) {
      await reject(
        record(mkVerdict('REJECT', `no clarification before the deadline (${policy.spec.clarify.timeout})`, 'timeout')),
      );
      break;
    }
    state.applyClarification(state.pendingClarification!);
  }

  if (state.dispute !== null) {
    await notify
      .announceResolution({
        workflow_id: state.workflowId,
        proposal_id: proposal.proposal_id,
        status: state.status(),
        verdict: state.latest,
        decisions: state.decisions,
        refs,
      })
      .catch((err) => log.error('resolution announcement failed', { error: String(err) }));
  }
  // Let Update handlers return their answers before the run closes.
  await condition(allHandlersFinished);
  return outcomeOf(state.snapshot());
}
