/**
 * One workflow per proposal: validate -> tier -> (pass | pattern check | judge | human) -> clarify
 * rounds -> escalation -> execution of exactly the approved action. The history is the audit trail.
 * Deterministic code only: activities are imported as types. The function registers handlers,
 * runs activities and waits; every decision is a method of ProposalState.
 */
import {
  ApplicationFailure,
  allHandlersFinished,
  CancellationScope,
  condition,
  log,
  workflowInfo,
} from '@temporalio/workflow';
import type { JudgeActivities } from '../../activities/types';
import { issuedFor, proposalWorkflowId, safeParseProposal, searchableTarget, targetKey } from '../schemas';
import { FailureType } from '../../contracts/lifecycle';
import { type ProposalOutcome, outcomeOf, type Stage } from '../../contracts/status';
import type { Verdict } from '../../contracts/verdict';
import type { AnnouncementRef } from '../../contracts/escalation';
import { capabilityTtlMs, isShadow, quorumFor, proposalTier } from '../../policy/classify';
import { SA } from '../../names';
import { durationMs } from '../../contracts/duration';
import { loadDecisionVerifier } from '../decision-verifier';
import { ProposalMetrics } from '../metrics';
import { refusalFailure } from '../refusal';
import { local, notify, queueActivities } from './activity-stubs';
import { failureMessage, isProposalIdTaken } from './failures';
import { setProposalHandlers, setWithdrawHandler } from './messages';
import { searchAttributeBatch } from './search-attributes';
import { ProposalState } from './state';

export interface ProposalWorkflowInput {
  proposal: unknown;
}

export async function proposalWorkflow(input: ProposalWorkflowInput): Promise<ProposalOutcome> {
  // Validate again where the workflow starts: a client that skipped validation starts nothing useful.
  const parsed = safeParseProposal(input.proposal);
  if (!parsed.ok) throw refusalFailure(parsed.refusal);
  // A run only under the id its content names: otherwise anyone who can reach the namespace could
  // start other content under an id people have decided on.
  const expectedId = proposalWorkflowId(parsed.value);
  if (workflowInfo().workflowId !== expectedId) {
    throw ApplicationFailure.nonRetryable(
      `workflow id ${workflowInfo().workflowId} is not the fingerprint of the proposal's content ` +
        `(expected ${expectedId}); submit proposals with agent-judge propose or submitProposal`,
      FailureType.BadInput,
    );
  }

  // A caller (the MCP proxy, a runtime's gate) performs the approved action itself: agent-judge's executors never do.
  const callerPerforms = parsed.value.performer?.by === 'caller';

  // Handlers first, before any await: an Update that arrives with the start must find them.
  let current: ProposalState | undefined;
  let metrics: ProposalMetrics | undefined;
  /** The judge worker's rules, for an approval with edits (set once the policy snapshot names the judge queue). */
  let checkRules: JudgeActivities['checkRules'] | undefined;
  const now = () => new Date(Date.now()).toISOString();
  setProposalHandlers({
    current: () => current,
    metrics: () => metrics,
    checkRules: () => checkRules,
    now,
  });

  // The chosen proposal_id is reserved beside this run's start, not before it (docs/performance.md §6): when the
  // reservation finds it held by other content, the submitting client withdraws the run, or agent-judge's executor
  // refuses to act and the run withdraws itself. Everything the run does from its first decision on runs in `decided`,
  // which a withdrawal cancels wherever it waits.
  const decided = new CancellationScope();
  let withdrawal: string | null = null;
  const withdraw = (reason: string) => {
    withdrawal ??= reason;
    decided.cancel();
  };
  setWithdrawHandler(parsed.value.proposal_id, () => current, withdraw);

  // With the run: a proposal the policy alone approves comes back with its capability token (see issueCapability).
  const snapshot = await local.policySnapshot({ workflow_id: workflowInfo().workflowId, proposal: parsed.value });
  const { policy, taskQueues } = snapshot;
  const { executable } = snapshot;
  const activities = queueActivities(policy, taskQueues);
  const { judge, executor } = activities;
  checkRules = activities.checkRules;

  const proposal = parsed.value;
  const tier = proposalTier(policy, proposal);
  const state = new ProposalState(
    proposal,
    policy,
    workflowInfo().workflowId,
    tier,
    isShadow(policy, proposal.action_type),
    quorumFor(policy, tier),
    workflowInfo().firstExecutionRunId,
  );
  state.policySha256 = snapshot.policy_sha256;
  current = state;
  metrics = new ProposalMetrics(policy, tier, proposal.action_type);
  const counted = metrics;
  let refs: AnnouncementRef[] = [];

  // Search attributes are written as one upsert right before the workflow next blocks (search-attributes.ts).
  const { upsert, flush, blocking } = searchAttributeBatch();
  const setStage = (stage: Stage) => {
    state.setStage(stage);
    upsert([{ key: SA.Stage, value: stage }]);
  };
  const record = (v: Verdict) => {
    const verdict = state.recordVerdict(v, now());
    upsert([{ key: SA.Verdict, value: verdict.verdict }]);
    counted.verdict(verdict);
    return verdict;
  };

  upsert([
    { key: SA.Tier, value: tier },
    { key: SA.Stage, value: 'judging' },
  ]);

  /** One judgement of the proposal as it currently stands. */
  const judgeOnce = async (): Promise<Verdict> => {
    // memory_write is confined to the agent's own stores before any approval (issue 21); the full judge's hard rules
    // check the same.
    const confined = tier !== 'full-judge-review' && state.proposal.action_type === 'memory_write';
    const store = confined ? state.memoryStoreVerdict(now()) : null;
    if (store) return store;
    switch (tier) {
      case 'no-judge':
        return state.noJudgeVerdict(now());
      case 'lightweight-approval':
        return state.patternVerdict(now());
      case 'full-judge-review':
        try {
          return await blocking(() =>
            judge.judge({ proposal: state.proposal, tier, round: state.clarifyRounds, policy }),
          );
        } catch (err) {
          log.error('judge activity failed', { error: String(err) });
          return state.judgeUnavailableVerdict(failureMessage(err), now());
        }
      case 'human-only':
        throw ApplicationFailure.nonRetryable('human-only proposals are never judged', FailureType.Internal);
    }
  };

  const reject = async (v: Verdict): Promise<void> => {
    setStage('rejected');
    try {
      const r = await blocking(() =>
        notify.recordRejection({ workflow_id: state.workflowId, target: searchableTarget(state.proposal) }),
      );
      if (r.flag) {
        state.raiseAuditFlag();
        upsert([{ key: SA.AuditFlag, value: true }]);
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

  /**
   * Seed 000 §8: the action about to be performed gets a single-use token for it alone, signed by the
   * workflow worker (a local activity: the token is its recorded result).
   */
  const issueCapability = async (executedHere: boolean, redeemHere = false): Promise<string> => {
    // The snapshot carries the policy's digest (computed once by the worker).
    const request = state.capabilityRequest(capabilityTtlMs(policy), snapshot.policy_sha256);
    // The snapshot also signed the token when the policy alone approved the proposal as submitted: used only for
    // exactly this request, once. Otherwise (a judge, a person, a clarified action) the worker signs it now. Either
    // way the token is a recorded local activity result: replay never re-signs.
    const early = snapshot.capability;
    const issued =
      early && !state.capability && issuedFor(early, request) ? early : await local.issueCapability(request);
    state.recordCapability(issued, executedHere);
    // In the same synchronous step as the token enters the run's state: nothing can redeem it in between.
    if (redeemHere) state.redeemForExecutor(now());
    return issued.token;
  };

  /**
   * The caller performs the approved action (a call through the MCP proxy), never agent-judge's executors: the
   * proposal stays open, approved, until the caller reports what happened or the window closes.
   */
  const awaitCallerOutcome = async (): Promise<void> => {
    const withinMs = durationMs(policy.spec.mcp?.performWithin ?? '10m');
    state.openCallerWindow(new Date(Date.now() + withinMs).toISOString());
    setStage('approved');
    if (!(await blocking(() => condition(() => state.callerDone(), withinMs)))) state.callerTimedOut(now());
    const stage = state.callerStage();
    if (stage !== 'approved') setStage(stage);
  };

  const execute = async (v: Verdict): Promise<void> => {
    if (callerPerforms) {
      // The caller (the MCP proxy) redeems the token before it forwards the call.
      await issueCapability(false);
      await awaitCallerOutcome();
      return;
    }
    // No executor for this type here: the caller performs it, no round trip to the executor queue.
    if (!executable.includes(state.proposal.action_type)) {
      // The caller redeems the token before acting; the run waits for that at its end.
      await issueCapability(false);
      setStage('approved');
      return;
    }
    setStage('executing');
    // Agent-judge's executor redeems the token as the workflow schedules it, not by an Update of its own: one
    // workflow task fewer, and nobody can redeem the token between its issue and the activity.
    const capability = await issueCapability(true, true);
    const startedAt = now();
    let result;
    try {
      result = await blocking(() =>
        executor.execute({
          workflow_id: state.workflowId,
          // Exactly the approved action: the edited one when a person approved with edits.
          proposal: state.actionProposal,
          verdict: v,
          shadow: state.shadow,
          policy,
          capability,
        }),
      );
    } catch (err) {
      // The executor found this run's chosen proposal_id held by other content: it did not act, the run is withdrawn.
      if (isProposalIdTaken(err)) withdraw(failureMessage(err));
      if (withdrawal !== null) throw err;
      result = state.executorUnreachable(failureMessage(err), startedAt, now());
    }
    setStage(state.recordExecution(result));
    counted.executed(result);
    const uncertain = state.uncertainNotice();
    if (uncertain) {
      // An action that may or may not have happened is an escalation of its own: people are told.
      log.warn('execution outcome uncertain', { error: uncertain.execution.error ?? null });
      await blocking(() => notify.announceUncertainExecution(uncertain)).catch((err) =>
        log.error('uncertain-execution announcement failed', { error: String(err) }),
      );
    }
  };

  /** Escalation: open the dispute, tell people, wait for a decision or the deadline. */
  const escalate = async (v: Verdict | null): Promise<Verdict> => {
    // Decisions can arrive from here on: their validator checks signatures synchronously.
    await loadDecisionVerifier();
    const notice = state.openEscalation(v, Date.now());
    counted.escalated(v);
    counted.decided();
    setStage('awaiting_human');
    try {
      refs = await blocking(() => notify.announceEscalation(notice));
    } catch (err) {
      // People can still decide through the CLI; a broken channel must not lose the proposal.
      log.error('escalation announcement failed', { error: String(err) });
    }
    const [beforeReminder, afterReminder] = state.humanWaits();
    let decided = await blocking(() => condition(() => state.humanWaitOver(), beforeReminder));
    if (!decided && afterReminder !== undefined) {
      await blocking(() => notify.announceReminder({ notice, refs, approvals: state.approvals() })).catch((err) =>
        log.error('reminder failed', { error: String(err) }),
      );
      decided = await blocking(() => condition(() => state.humanWaitOver(), afterReminder));
    }
    state.closeEscalation();
    return state.humanOutcome(decided, now());
  };

  /**
   * Asks the candidate grants in turn (each one Update to its workflow, which decides); the first that takes the use
   * approves. Never for an action the policy's own rules refuse: the memory-store confinement and, in the
   * lightweight tier, deny patterns stay in force; only a missing topic rule may be covered.
   */
  const useGrant = async (candidates: string[]): Promise<Verdict | null> => {
    if (state.proposal.action_type === 'memory_write' && state.memoryStoreVerdict(now())) return null;
    if (tier === 'lightweight-approval' && state.patternVerdict(now()).rule !== 'topics.no-match') return null;
    const use = {
      workflow_id: state.workflowId,
      agent_id: state.proposal.agent_id,
      // A session-scoped grant checks it; absent (no session), the Update is what it always was.
      ...(state.proposal.session_id !== undefined ? { session_id: state.proposal.session_id } : {}),
      action_type: state.proposal.action_type,
      target: state.proposal.target,
      parameters: state.proposal.parameters,
      // Tainted (values from untrusted content): only a grant that says it covers tainted calls covers it.
      ...((state.proposal.provenance?.taints.length ?? 0) > 0 ? { tainted: true } : {}),
      tier,
    };
    for (const grant_id of candidates) {
      const used = await blocking(() => local.useGrant({ grant_id, use }));
      if (used) {
        counted.grantUsed();
        return state.grantVerdict(used, now());
      }
    }
    return null;
  };

  /** A verdict that ends the proposal: execute it when approved, else reject. */
  const settle = async (v: Verdict): Promise<void> => {
    if (v.verdict === 'APPROVE') await execute(v);
    else await reject(v);
  };

  /**
   * What a judgement counts: a judge verdict that is not (routed as) CLARIFY decides the proposal's
   * judging, once; a CLARIFY past the round limit is the rules' REJECT. Shadow verdicts count as
   * judged by their real routing, though they execute regardless.
   */
  const countJudgement = (v: Verdict, step: string) => {
    const judge = v.decided_by === 'rules' || v.decided_by === 'judge';
    const route = step === 'give-up' ? 'reject' : state.route(v);
    if (route === 'clarify' && step !== 'execute') return;
    if (judge && route !== 'clarify')
      counted.judged(route === 'execute' ? 'APPROVE' : route === 'reject' ? 'REJECT' : 'ESCALATE');
    counted.decided();
  };

  /** Tells people how an escalated proposal ended (edits the dispute's messages); once per run. */
  let announced = false;
  const announceResolution = async (): Promise<void> => {
    if (announced || state.dispute === null) return;
    announced = true;
    await blocking(() => notify.announceResolution(state.resolutionNotice(refs))).catch((err) =>
      log.error('resolution announcement failed', { error: String(err) }),
    );
  };

  try {
    await decided.run(async () => {
      // A live grant that covers the action approves it before any judge or person (docs/grants.md).
      const granted = snapshot.grant_candidates ? await useGrant(snapshot.grant_candidates) : null;
      if (granted) {
        const verdict = record(granted);
        counted.decided();
        await execute(verdict);
      }
      // The decision loop (seed 000 §3.3): judge, then execute / reject / escalate / clarify.
      if (!granted && tier === 'human-only') await settle(record(await escalate(null)));
      while (!granted && tier !== 'human-only') {
        setStage('judging');
        const verdict = record(await judgeOnce());
        const step = state.nextStep(verdict);
        countJudgement(verdict, step);
        if (step === 'execute') {
          // Shadow mode (seed 000 §7 phase 2): the verdict is recorded, not enforced.
          if (state.shadow) log.info('shadow mode: executing regardless of the verdict', { verdict: verdict.verdict });
          await execute(verdict);
          break;
        }
        if (step === 'reject') {
          await reject(verdict);
          break;
        }
        if (step === 'escalate') {
          await settle(record(await escalate(verdict)));
          break;
        }
        if (step === 'give-up') {
          await reject(record(state.clarifyExhaustedVerdict(verdict, now())));
          break;
        }
        const clarifyMs = state.openClarification(Date.now());
        counted.clarifyRequested();
        setStage('awaiting_clarification');
        const answered = await blocking(() => condition(() => state.pendingClarification !== null, clarifyMs));
        state.closeClarification();
        if (!answered) {
          counted.decided();
          await reject(record(state.clarifyTimeoutVerdict(now())));
          break;
        }
        state.applyPendingClarification();
      }

      // People learn the decision now, not when the caller later redeems its token (or the token expires).
      await announceResolution();
      // An action the caller performs keeps its run open until its token is redeemed or expires: the
      // redemption is an Update, and a closed run takes none. `propose --wait` has answered already.
      // A caller that reported its outcome (forwarded or abandoned) has nothing left to redeem.
      if (state.awaitsRedemption() && !state.callerDone()) {
        const redeemed = await blocking(() =>
          condition(() => !state.awaitsRedemption(), state.redemptionWaitMs(Date.now())),
        );
        if (!redeemed) {
          state.expireCapability(now());
          log.info('capability token expired unredeemed', { token_id: state.capability?.token_id ?? null });
        }
      }
    });
  } catch (err) {
    // A withdrawal cancels the run's waits and activities wherever they are: anything else is a real failure.
    if (withdrawal === null) throw err;
  }
  /**
   * Refused, never performed: the record says why (a settled stage, so a waiting `awaitSettled` answers), and the
   * proposal_id stops naming this run (lookups by it find the proposal that holds it). Once per run.
   */
  let recordedWithdrawal = false;
  const recordWithdrawal = (reason: string) => {
    if (recordedWithdrawal) return;
    recordedWithdrawal = true;
    record(state.withdraw(reason, now()));
    setStage('rejected');
    upsert([{ key: SA.ProposalId, value: null }]);
  };
  if (withdrawal !== null) recordWithdrawal(withdrawal);

  // A withdrawal during an escalation still closes the dispute people were shown.
  await announceResolution();

  // Let Update handlers return their answers before the run closes.
  // The last flush comes before the Update answers, so a caller that reads visibility after its answer sees them.
  await blocking(() => condition(allHandlersFinished));
  // (A withdrawal may also arrive after the decisions ended.) The run fails, so the same content may be submitted
  // again under another proposal_id (the client's reuse policy allows a failed run's id once it checked why).
  const reason = withdrawal as string | null;
  if (reason !== null) {
    recordWithdrawal(reason);
    flush();
    throw ApplicationFailure.nonRetryable(reason, FailureType.ProposalIdTaken);
  }
  const outcome = outcomeOf(state.toRecord());
  counted.closed(outcome.status, state.latest);
  return outcome;
}
