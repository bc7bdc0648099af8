/**
 * Re-decides one recorded proposal under a candidate policy and judge, with the code the live path uses and nothing
 * else: the gate's completion of a shell line (src/gate/complete.ts), the tier (src/policy/classify.ts), the proposal
 * workflow's state class and its verdicts and routing (src/workflows/proposal/state.ts: no-judge, memory stores,
 * patterns, nextStep, clarify rounds), and the full judge (src/judge `judgeProposal`). Nothing here starts a workflow,
 * signals, notifies, executes or uses a grant: where the workflow would wait for a person, the replay stops at
 * "person"; where it would ask the actor, it applies the clarification the actor really gave, if any.
 */
import type { Clarification } from '../contracts/messages';
import type { CompliancePolicy } from '../contracts/policy';
import type { Proposal } from '../contracts/proposal';
import type { Tier, Verdict } from '../contracts/verdict';
import { SHELL_COMMAND } from '../contracts/hooks';
import { completeHookCall, completionContextOf, type CompletionContext } from '../gate/complete';
import { evidenceReport, type EvidenceReport } from '../judge/evidence';
import { judgeProposal, type JudgeDeps, type ModelClient } from '../judge';
import { isShadow, quorumFor, tierFor } from '../policy/classify';
import { ProposalState } from '../workflows/proposal/state';

/**
 * Where a proposal ends under a policy before any person acts: performed (APPROVE), refused (REJECT), sent to a
 * person, sent back to the actor with no recorded answer (CLARIFY), or, in a replay, not decidable without a model.
 */
export type Outcome = 'APPROVE' | 'REJECT' | 'person' | 'CLARIFY' | 'needs-model';
export const OUTCOMES: readonly Outcome[] = ['APPROVE', 'REJECT', 'person', 'CLARIFY', 'needs-model'];

/** What the candidate decided for one proposal, and why (the deciding verdict's rule and reason). */
export interface CandidateDecision {
  outcome: Outcome;
  tier: Tier;
  /** Set when the gate decided before any proposal would exist (a shell line run at once or refused). */
  gate?: string;
  shadow: boolean;
  rule: string | null;
  reason: string;
  decided_by: string;
  /** Every verdict the candidate's policy, rules and judge gave, in order (the metrics read them). */
  verdicts: Verdict[];
  clarify_rounds: number;
  /** Model conversations: answered by the candidate model, or by a recorded answer. */
  model: { called: number; reused: number };
}

/** What a decision says about itself, for printing: where it ends and which rule or judge said why. */
export type DecisionSummary = Pick<CandidateDecision, 'outcome' | 'tier' | 'rule' | 'reason' | 'decided_by' | 'gate'>;

export function decisionSummary(d: CandidateDecision): DecisionSummary {
  return {
    outcome: d.outcome,
    tier: d.tier,
    rule: d.rule,
    reason: d.reason,
    decided_by: d.decided_by,
    ...(d.gate ? { gate: d.gate } : {}),
  };
}

/** The candidate a replay decides with. */
export interface Candidate {
  policy: CompliancePolicy;
  /** Directory relative paths resolve against (where the workers ran). */
  baseDir: string;
  /** A gate completion context made once from the policy (built on first use when absent). */
  completion?: CompletionContext;
}

/** The model side of one proposal's replay: a client (candidate model, recorded answers or a probe) and its state. */
export interface ReplayModel {
  client: ModelClient | undefined;
  /** True when the client could not answer a prompt it was asked (no recorded answer; a probe). */
  missed(): boolean;
  /** Conversations answered: by a real candidate model, or by a recorded answer. */
  counts(): { called: number; reused: number };
  timeoutMs?: number;
}

/** The recorded evidence checks of a verdict whose proposal cited exactly this evidence: reused, not re-fetched. */
export function recordedEvidence(recorded: readonly Verdict[]): (p: Proposal) => EvidenceReport | undefined {
  return (p) => {
    const v = [...recorded].reverse().find((x) => x.evidence_checks?.length === p.cited_evidence.length);
    if (!v?.evidence_checks || p.cited_evidence.length === 0) return undefined;
    return evidenceReport(v.evidence_checks.map((c) => ({ ...c })));
  };
}

/**
 * The candidate's decision for a recorded proposal: `clarifications` answer CLARIFY rounds in their recorded order;
 * `now` stamps the verdicts (the recorded start, so a replay's output does not depend on when it runs).
 */
export async function decideAgain(
  proposal: Proposal,
  clarifications: readonly Clarification[],
  recordedVerdicts: readonly Verdict[],
  candidate: Candidate,
  model: ReplayModel,
  now: string,
): Promise<CandidateDecision> {
  const policy = candidate.policy;
  const tier = tierFor(policy, proposal.action_type);
  const shadow = isShadow(policy, proposal.action_type);
  const base = { tier, shadow, verdicts: [] as Verdict[], clarify_rounds: 0, model: { called: 0, reused: 0 } };

  if (proposal.action_type === SHELL_COMMAND) {
    candidate.completion ??= completionContextOf(policy, candidate.baseDir);
    const gate = await shellGate(proposal, candidate.completion);
    // Recorded as the policy's verdict: the gate's decision is the policy's, no judge's (metrics count it so).
    const kind = gate?.outcome === 'APPROVE' ? 'APPROVE' : 'REJECT';
    if (gate) {
      const v: Verdict = {
        proposal_id: proposal.proposal_id,
        verdict: kind,
        reason: gate.reason,
        constraints: { require_human_review: false },
        escalation: null,
        confidence: 1,
        decided_by: 'policy',
        tier,
        rule: gate.rule ?? undefined,
        decided_at: now,
      };
      return { ...base, ...gate, verdicts: [v] };
    }
  }

  const state = new ProposalState(proposal, policy, 'replay', tier, shadow, quorumFor(policy, tier), null);
  if (tier === 'human-only') {
    return {
      ...base,
      outcome: 'person',
      rule: null,
      reason: `tier human-only: a person decides`,
      decided_by: 'policy',
    };
  }
  const deps: JudgeDeps = {
    baseDir: candidate.baseDir,
    now: () => new Date(now),
    model: model.client,
    noModelReason: 'no model in this replay',
    modelTimeoutMs: model.timeoutMs,
    evidence: recordedEvidence(recordedVerdicts),
  };
  // The workflow's judgeOnce: memory stores first outside the full judge, then the tier's own judgement.
  const judgeOnce = async (): Promise<Verdict> => {
    const confined = tier !== 'full-judge-review' && state.proposal.action_type === 'memory_write';
    const store = confined ? state.memoryStoreVerdict(now) : null;
    if (store) return store;
    if (tier === 'no-judge') return state.noJudgeVerdict(now);
    if (tier === 'lightweight-approval') return state.patternVerdict(now);
    return judgeProposal({ proposal: state.proposal, tier, round: state.clarifyRounds, policy }, deps);
  };

  let clarifyAt = 0;
  for (;;) {
    const verdict = state.recordVerdict(await judgeOnce(), now);
    const counts = model.counts();
    const done = (outcome: Outcome, v: Verdict = verdict): CandidateDecision => ({
      ...base,
      outcome,
      rule: v.rule ?? null,
      reason: v.reason,
      decided_by: v.decided_by,
      verdicts: [...state.verdicts],
      clarify_rounds: state.clarifyRounds,
      model: counts,
    });
    if (model.missed()) return done('needs-model');
    const step = state.nextStep(verdict);
    if (step === 'execute') return done('APPROVE');
    if (step === 'reject') return done('REJECT');
    if (step === 'escalate') return done('person');
    if (step === 'give-up')
      return done('REJECT', state.recordVerdict(state.clarifyExhaustedVerdict(verdict, now), now));
    const answer = clarifications[clarifyAt];
    if (!answer) return done('CLARIFY');
    clarifyAt += 1;
    state.applyClarification(answer);
  }
}

/** A recorded shell line the candidate's gate would run at once or refuse, as a decision; null when it is judged. */
async function shellGate(
  proposal: Proposal,
  completion: CompletionContext,
): Promise<Omit<CandidateDecision, 'tier' | 'shadow' | 'verdicts' | 'clarify_rounds' | 'model'> | null> {
  const command = proposal.parameters.command;
  if (typeof command !== 'string') return null;
  const cwd = typeof proposal.target.cwd === 'string' ? proposal.target.cwd : undefined;
  const unmapped = proposal.parameters.unmapped_input;
  const mapping = await completeHookCall(
    {
      kind: 'judged',
      rule: { name: proposal.performer?.rule ?? 'shell', rule: null },
      actionType: SHELL_COMMAND,
      target: cwd === undefined ? {} : { cwd },
      parameters: { command, ...(unmapped === undefined ? {} : { unmapped_input: unmapped }) },
    },
    { runtime: proposal.performer?.runtime ?? 'replay', server: 'builtin', tool: 'shell', arguments: {}, cwd },
    completion,
  );
  if (mapping.kind === 'no-judge') {
    return {
      outcome: 'APPROVE',
      gate: 'run at once',
      rule: mapping.rule.name,
      reason: 'the gate runs this line at once: every command on it is allowed (spec.hooks.shell.allow)',
      decided_by: 'gate',
    };
  }
  if (mapping.kind === 'refused') {
    return {
      outcome: 'REJECT',
      gate: 'refused',
      rule: mapping.refusal.code,
      reason: mapping.refusal.reason,
      decided_by: 'gate',
    };
  }
  return null;
}
