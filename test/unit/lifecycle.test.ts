import { describe, expect, it } from 'vitest';
import {
  AgentJudgeError,
  BadInputError,
  ExecutionRefusedError,
  NotFoundError,
  PolicyError,
} from '../../src/contracts/errors';
import {
  FINAL_STAGES,
  NON_RETRYABLE_FAILURE_TYPES,
  OUTCOME_STATUSES,
  outcomeStatusOf,
  routeVerdict,
  SETTLED_STAGES,
  STAGES,
  stageFrom,
} from '../../src/contracts/lifecycle';
import { EvidenceCheckSchema, type Verdict } from '../../src/contracts/verdict';
import { outcomeOf } from '../../src/judge/eval';
import { defaultPolicyWith } from '../../src/policy/load';

describe('outcomeStatusOf()', () => {
  it('a running proposal: pending while judging or executing, else its stage', () => {
    expect(outcomeStatusOf('judging', false)).toBe('pending');
    expect(outcomeStatusOf('executing', false)).toBe('pending');
    expect(outcomeStatusOf('awaiting_human', false)).toBe('awaiting_human');
    expect(outcomeStatusOf('awaiting_clarification', false)).toBe('awaiting_clarification');
  });

  it('a closed run that never reached a final stage (terminated, timed out) is failed, whatever it awaited', () => {
    for (const stage of STAGES.filter((s) => !FINAL_STAGES.includes(s))) {
      expect(outcomeStatusOf(stage, true)).toBe('failed');
    }
  });

  it('a final stage is its own status, open or closed', () => {
    for (const stage of FINAL_STAGES) {
      expect(outcomeStatusOf(stage, true)).toBe(stage);
      expect(outcomeStatusOf(stage, false)).toBe(stage);
    }
  });

  it('every status it derives is an outcome status; settled and final stages are stages', () => {
    for (const stage of STAGES)
      for (const closed of [true, false]) {
        expect(OUTCOME_STATUSES).toContain(outcomeStatusOf(stage, closed));
      }
    for (const stage of [...SETTLED_STAGES, ...FINAL_STAGES]) expect(STAGES).toContain(stage);
  });

  it('reads an unknown search attribute value as judging', () => {
    expect(stageFrom('awaiting_human')).toBe('awaiting_human');
    expect(stageFrom(undefined)).toBe('judging');
    expect(stageFrom('nonsense')).toBe('judging');
  });
});

describe('routeVerdict(): one rule for the workflow and eval', () => {
  const policy = defaultPolicyWith({});
  const v = (verdict: Verdict['verdict'], confidence: number, extra: Partial<Verdict> = {}): Verdict => ({
    proposal_id: 'p',
    verdict,
    reason: 'r',
    constraints: { require_human_review: false },
    escalation: null,
    confidence,
    decided_by: 'judge',
    tier: 'full-judge-review',
    ...extra,
  });

  it.each([
    [v('APPROVE', 0.1), 'escalate', 'HUMAN'],
    [v('REJECT', 0.9), 'reject', 'REJECT'],
    [v('APPROVE', 0.5), 'clarify', 'CLARIFY'],
    [v('CLARIFY', 0.9), 'clarify', 'CLARIFY'],
    [v('APPROVE', 0.9, { constraints: { require_human_review: true } }), 'escalate', 'HUMAN'],
    [v('APPROVE', 0.9), 'execute', 'APPROVE'],
  ] as const)('%# -> %s (eval: %s)', (verdict, route, outcome) => {
    expect(routeVerdict(verdict, policy.spec.thresholds)).toBe(route);
    expect(outcomeOf(verdict, policy)).toBe(outcome);
  });
});

describe('evidence statuses', () => {
  it('the verdict schema accepts exactly the lifecycle evidence statuses', () => {
    for (const status of ['verified', 'failed', 'unverifiable', 'other-repo']) {
      expect(EvidenceCheckSchema.safeParse({ index: 0, status, detail: 'd' }).success).toBe(true);
    }
    expect(EvidenceCheckSchema.safeParse({ index: 0, status: 'maybe', detail: 'd' }).success).toBe(false);
  });
});

describe('error family -> failure types', () => {
  it('each class names its failure type and whether a retry can help', () => {
    expect(new BadInputError('x')).toMatchObject({ failureType: 'BadInput', retryable: false, name: 'BadInputError' });
    expect(new PolicyError('x')).toMatchObject({ failureType: 'BadPolicy', retryable: false });
    expect(new ExecutionRefusedError('x')).toMatchObject({ failureType: 'ExecutionRefused', retryable: false });
    expect(new NotFoundError('x')).toMatchObject({ failureType: 'NotFound', retryable: true });
    expect(new AgentJudgeError('x')).toMatchObject({ failureType: 'Internal', retryable: true });
    expect(NON_RETRYABLE_FAILURE_TYPES).toContain('CircleRefused');
  });
});
