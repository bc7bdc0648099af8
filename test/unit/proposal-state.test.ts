import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompliancePolicy } from '../../src/contracts/policy';
import { parseProposal } from '../../src/contracts/proposal';
import type { Tier, Verdict } from '../../src/contracts/verdict';
import { UNCERTAIN_EXPLANATION, type ExecutionStatus } from '../../src/contracts/lifecycle';
import { ApplicationFailure } from '@temporalio/common';
import { ProposalState } from '../../src/workflows/proposal/state';
import { readClarification, readDecision } from '../../src/workflows/proposal/messages';
import { loadDecisionVerifier } from '../../src/workflows/decision-verifier';
import { proposal, testPolicy } from '../helpers/system';

let baseDir: string;
let policy: CompliancePolicy;

beforeAll(async () => {
  // As the workflow does before it opens an escalation: decisions are checked from then on.
  await loadDecisionVerifier();
  baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-state-'));
  policy = testPolicy(baseDir, { escalation: { timeout: '24h', approvers: ['scott', 'alice', 'bob'] } });
});
afterAll(() => rmSync(baseDir, { recursive: true, force: true }));

function stateFor(
  type = 'forgejo_pr_create',
  {
    tier = 'full-judge-review',
    quorum = 1,
    overrides = {},
  }: { tier?: Tier; quorum?: number; overrides?: Record<string, unknown> } = {},
): ProposalState {
  return new ProposalState(
    parseProposal(proposal(type, overrides)),
    policy,
    'proposal-0123456789abcdef0123456789abcdef',
    tier,
    false,
    quorum,
  );
}

function verdict(kind: Verdict['verdict'], confidence: number, extra: Partial<Verdict> = {}): Verdict {
  return {
    proposal_id: 'p',
    verdict: kind,
    reason: 'test',
    constraints: { require_human_review: false },
    escalation: null,
    confidence,
    decided_by: 'judge',
    tier: 'full-judge-review',
    ...extra,
  };
}

describe('route()', () => {
  it.each([
    [0, 'escalate'],
    [0.29, 'escalate'],
    [0.3, 'clarify'],
    [0.45, 'clarify'],
    [0.59, 'clarify'],
    [0.6, 'execute'],
    [1, 'execute'],
  ])('APPROVE at confidence %s -> %s', (confidence, step) => {
    expect(stateFor().route(verdict('APPROVE', confidence))).toBe(step);
  });

  it.each([
    [0.29, 'escalate'],
    [0.3, 'reject'],
    [0.59, 'reject'],
    [1, 'reject'],
  ])('REJECT at confidence %s -> %s', (confidence, step) => {
    expect(stateFor().route(verdict('REJECT', confidence))).toBe(step);
  });

  it.each([
    [0.29, 'escalate'],
    [0.3, 'clarify'],
    [0.9, 'clarify'],
  ])('CLARIFY at confidence %s -> %s', (confidence, step) => {
    expect(stateFor().route(verdict('CLARIFY', confidence))).toBe(step);
  });

  it('an APPROVE that asks for human review escalates', () => {
    expect(stateFor().route(verdict('APPROVE', 0.95, { constraints: { require_human_review: true } }))).toBe(
      'escalate',
    );
    expect(
      stateFor().route(verdict('APPROVE', 0.95, { escalation: { to: 'human', reason: 'unsure about the vendor' } })),
    ).toBe('escalate');
  });

  it('follows the policy thresholds, not fixed numbers', () => {
    const strict = testPolicy(baseDir, { thresholds: { clarify: 0.9, human: 0.5 } });
    const s = new ProposalState(parseProposal(proposal('exec')), strict, 'wf', 'full-judge-review', false, 1);
    expect(s.route(verdict('APPROVE', 0.49))).toBe('escalate');
    expect(s.route(verdict('APPROVE', 0.89))).toBe('clarify');
    expect(s.route(verdict('APPROVE', 0.9))).toBe('execute');
  });
});

describe('canClarify()', () => {
  it('allows maxRounds clarifications (2 in the default policy) and no more', () => {
    const s = stateFor();
    expect(s.canClarify()).toBe(true);
    s.applyClarification({ justification: 'one' });
    expect(s.canClarify()).toBe(true);
    s.applyClarification({ justification: 'two' });
    expect(s.canClarify()).toBe(false);
  });

  it('allows none when maxRounds is 0', () => {
    const none = testPolicy(baseDir, { clarify: { maxRounds: 0, timeout: '1h' } });
    expect(
      new ProposalState(parseProposal(proposal('exec')), none, 'wf', 'full-judge-review', false, 1).canClarify(),
    ).toBe(false);
  });
});

describe('refuseClarification()', () => {
  const awaiting = () => {
    const s = stateFor();
    s.setStage('awaiting_clarification');
    return s;
  };

  it('refuses when the proposal is not awaiting clarification, naming the stage', () => {
    const s = stateFor();
    expect(s.refuseClarification({ justification: 'more' })?.reason).toBe(
      `proposal ${s.proposal.proposal_id} is not awaiting clarification (stage: judging)`,
    );
    s.setStage('rejected');
    expect(s.refuseClarification({ justification: 'more' })?.reason).toMatch(/\(stage: rejected\)$/);
  });

  it('refuses a second clarification while one is being judged', () => {
    const s = awaiting();
    s.receiveClarification({ justification: 'first' });
    expect(s.refuseClarification({ justification: 'second' })?.reason).toBe('a clarification is already being judged');
  });

  it('refuses widening max_lines; leaving it out keeps the earlier limit', () => {
    const s = awaiting();
    expect(
      s.refuseClarification({
        scope_claim: { files_only: ['src/schema/'], max_lines: 81, no_existing_code_deletion: true },
      })?.reason,
    ).toBe('scope_claim.max_lines may only narrow (was 80)');
    const omitted = { scope_claim: { files_only: ['src/schema/'] } };
    expect(s.refuseClarification(omitted)).toBeNull();
    s.applyClarification(omitted);
    expect(s.proposal.scope_claim.max_lines).toBe(80);
  });

  it('refuses widening files_only, naming what is outside', () => {
    const s = awaiting();
    expect(
      s.refuseClarification({
        scope_claim: { files_only: ['src/schema/a.ts', 'src/auth/'], max_lines: 80, no_existing_code_deletion: true },
      })?.reason,
    ).toBe('scope_claim.files_only may only narrow; not within the earlier scope: src/auth/');
    // Leaving files_only out keeps the earlier scope (the clarification is merged).
    const omitted = { scope_claim: { max_lines: 40 } };
    expect(s.refuseClarification(omitted)).toBeNull();
    s.applyClarification(omitted);
    expect(s.proposal.scope_claim.files_only).toEqual(['src/schema/']);
  });

  it('refuses a sibling directory sharing the scope prefix', () => {
    const s = awaiting();
    expect(
      s.refuseClarification({
        scope_claim: { files_only: ['src/schema-evil/'], max_lines: 80, no_existing_code_deletion: true },
      })?.reason,
    ).toMatch(/files_only may only narrow/);
  });

  it.each([['src/schema/../auth/'], ['src/schema/../../'], ['src/schema/%2E%2E/auth/'], ['src/schema\\..\\auth\\']])(
    'refuses a files_only entry %j that climbs out of the earlier scope',
    (wider) => {
      const s = awaiting();
      expect(
        s.refuseClarification({ scope_claim: { files_only: [wider], max_lines: 80, no_existing_code_deletion: true } })
          ?.reason,
      ).toMatch(/^scope_claim\.files_only may only narrow/);
    },
  );

  it('refuses dropping no_existing_code_deletion', () => {
    const s = awaiting();
    expect(
      s.refuseClarification({
        scope_claim: { files_only: ['src/schema/'], max_lines: 80, no_existing_code_deletion: false },
      })?.reason,
    ).toBe('scope_claim.no_existing_code_deletion may not be dropped');
    // Leaving it out keeps it on.
    const omitted = { scope_claim: { files_only: ['src/schema/'], max_lines: 80 } };
    expect(s.refuseClarification(omitted)).toBeNull();
    s.applyClarification(omitted);
    expect(s.proposal.scope_claim.no_existing_code_deletion).toBe(true);
  });

  it('accepts a narrower scope, more evidence, or a new justification', () => {
    const s = awaiting();
    expect(
      s.refuseClarification({
        scope_claim: { files_only: ['src/schema/validator.ts'], max_lines: 50, no_existing_code_deletion: true },
      }),
    ).toBeNull();
    expect(
      s.refuseClarification({ cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/7' }] }),
    ).toBeNull();
    expect(s.refuseClarification({ justification: 'issue 42 asks for exactly this' })).toBeNull();
  });

  it('accepts any scope when the proposal claimed none', () => {
    const s = stateFor('exec');
    s.setStage('awaiting_clarification');
    expect(s.refuseClarification({ scope_claim: { max_lines: 1000 } })).toBeNull();
  });
});

describe('applyClarification()', () => {
  it('appends evidence, merges the scope, replaces the justification and counts the round', () => {
    const s = stateFor();
    const before = s.proposal;
    s.receiveClarification({ justification: 'x' });
    s.applyClarification({
      justification: 'now with the issue',
      cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/43' }],
      scope_claim: { max_lines: 50 },
    });
    expect(s.proposal.justification).toBe('now with the issue');
    expect(s.proposal.cited_evidence).toEqual([
      ...before.cited_evidence,
      { type: 'issue', url: 'https://example.org/issues/43' },
    ]);
    expect(s.proposal.scope_claim).toEqual({
      files_only: ['src/schema/'],
      max_lines: 50,
      no_existing_code_deletion: true,
    });
    expect(s.clarifyRounds).toBe(1);
    expect(s.pendingClarification).toBeNull();
    // The action itself is untouched.
    expect(s.proposal.target).toEqual(before.target);
    expect(s.proposal.parameters).toEqual(before.parameters);
    expect(s.proposal.proposal_id).toBe(before.proposal_id);
  });

  it('keeps the justification and scope when the clarification only adds evidence', () => {
    const s = stateFor('forgejo_pr_create', { overrides: { cited_evidence: [] } });
    const before = s.proposal;
    s.applyClarification({ cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/1' }] });
    s.applyClarification({ cited_evidence: [{ type: 'pr', url: 'https://example.org/pulls/2' }] });
    expect(s.proposal.justification).toBe(before.justification);
    expect(s.proposal.scope_claim).toEqual(before.scope_claim);
    expect(s.proposal.cited_evidence.map((e) => e.url)).toEqual([
      'https://example.org/issues/1',
      'https://example.org/pulls/2',
    ]);
    expect(s.clarifyRounds).toBe(2);
    expect(s.canClarify()).toBe(false);
  });
});

describe('human decisions', () => {
  const awaiting = (quorum = 1) => {
    const s = stateFor('financial_op', { tier: 'human-only', quorum });
    s.setStage('awaiting_human');
    return s;
  };

  it('refuses a decision when the proposal is not awaiting one', () => {
    const s = stateFor('financial_op', { tier: 'human-only' });
    expect(s.refuseDecision({ decision: 'approve', approver: 'scott', via: 'cli' }, Date.now())?.reason).toBe(
      `proposal ${s.proposal.proposal_id} is not awaiting a human decision (stage: judging)`,
    );
  });

  it('refuses anyone not listed as an approver', () => {
    expect(
      awaiting().refuseDecision({ decision: 'approve', approver: 'mallory', via: 'cli' }, Date.now())?.reason,
    ).toBe('mallory is not an approver for this proposal');
  });

  it('refuses the same approver twice', () => {
    const s = awaiting(2);
    expect(s.refuseDecision({ decision: 'approve', approver: 'scott', via: 'cli' }, Date.now())).toBeNull();
    expect(s.addDecision({ decision: 'approve', approver: 'scott', via: 'cli' }, '2025-01-01T00:00:00.000Z')).toBe(
      'pending',
    );
    expect(s.refuseDecision({ decision: 'approve', approver: 'scott', via: 'discord' }, Date.now())?.reason).toBe(
      'scott has already decided this proposal',
    );
  });

  it('quorum 1: one approval approves', () => {
    const s = awaiting(1);
    expect(s.humanWaitOver()).toBe(false);
    expect(
      s.addDecision({ decision: 'approve', approver: 'scott', via: 'cli', reason: 'fine' }, '2025-01-01T00:00:00.000Z'),
    ).toBe('approved');
    expect(s.humanWaitOver()).toBe(true);
    expect(s.decisions).toEqual([
      { decision: 'approve', approver: 'scott', via: 'cli', reason: 'fine', at: '2025-01-01T00:00:00.000Z' },
    ]);
  });

  it('quorum 2: the first approval is pending, the second distinct approval approves', () => {
    const s = awaiting(2);
    expect(s.addDecision({ decision: 'approve', approver: 'scott', via: 'cli' }, 't1')).toBe('pending');
    expect(s.humanWaitOver()).toBe(false);
    expect(s.addDecision({ decision: 'approve', approver: 'alice', via: 'discord' }, 't2')).toBe('approved');
    expect(s.humanWaitOver()).toBe(true);
    expect(s.approvals().map((d) => d.approver)).toEqual(['scott', 'alice']);
  });

  it('a single reject ends it, even after an approval towards the quorum', () => {
    const s = awaiting(2);
    s.addDecision({ decision: 'approve', approver: 'scott', via: 'cli' }, 't1');
    expect(s.addDecision({ decision: 'reject', approver: 'bob', via: 'cli', reason: 'too much money' }, 't2')).toBe(
      'rejected',
    );
    expect(s.humanWaitOver()).toBe(true);
  });
});

describe('toRecord()', () => {
  it.each([
    ['judging', 'pending'],
    ['executing', 'pending'],
    ['awaiting_clarification', 'awaiting_clarification'],
    ['awaiting_human', 'awaiting_human'],
    ['executed', 'executed'],
    ['approved', 'approved'],
    ['rejected', 'rejected'],
    ['failed', 'failed'],
  ] as const)('stage %s shows status %s', (stage, status) => {
    const s = stateFor();
    s.setStage(stage);
    expect(s.toRecord().status).toBe(status);
    expect(s.toRecord().stage).toBe(stage);
  });

  it('counts settled stages only', () => {
    const s = stateFor();
    s.setStage('judging');
    s.setStage('executing');
    expect(s.settledCount).toBe(0);
    s.setStage('awaiting_clarification');
    s.setStage('judging');
    s.setStage('executed');
    expect(s.settledCount).toBe(2);
  });

  it('reports the proposal, latest verdict, rounds, deadlines and policy as plain JSON', () => {
    const s = stateFor('forgejo_pr_create', { quorum: 2 });
    const first = verdict('CLARIFY', 1, { decided_by: 'rules' });
    const second = verdict('APPROVE', 0.9);
    s.recordVerdict(first, '2025-01-01T00:00:00.000Z');
    s.recordVerdict(second, '2025-01-01T00:00:00.000Z');
    s.applyClarification({ justification: 'clearer' });
    s.setStage('judging');
    s.openClarification(Date.parse('2025-01-01T00:00:00.000Z'));
    const snap = s.toRecord();
    expect(snap).toMatchObject({
      proposal_id: s.proposal.proposal_id,
      workflow_id: 'proposal-0123456789abcdef0123456789abcdef',
      status: 'pending',
      tier: 'full-judge-review',
      shadow: false,
      verdict: { ...second, decided_at: '2025-01-01T00:00:00.000Z' },
      verdicts: [
        { ...first, decided_at: '2025-01-01T00:00:00.000Z' },
        { ...second, decided_at: '2025-01-01T00:00:00.000Z' },
      ],
      clarify_rounds: 1,
      max_clarify_rounds: 2,
      deadlines: { clarification: '2025-01-01T01:00:00.000Z', human: null },
      dispute: null,
      decisions: [],
      approvals_needed: 2,
      execution: null,
      audit_flag: false,
      policy: 'default',
    });
    expect(JSON.parse(JSON.stringify(snap))).toEqual(snap);
  });

  it('has no latest verdict before the first judgement', () => {
    expect(stateFor().toRecord().verdict).toBeNull();
  });
});

const NOW = '2025-01-01T00:00:00.000Z';
const NOW_MS = Date.parse(NOW);

describe('recordVerdict()', () => {
  it('appends the verdict, stamps it when it carries no time, and makes it the latest', () => {
    const s = stateFor();
    const recorded = s.recordVerdict(verdict('APPROVE', 0.9), NOW);
    expect(recorded.decided_at).toBe(NOW);
    expect(s.latest).toEqual(recorded);
    const stamped = s.recordVerdict(verdict('REJECT', 1, { decided_at: '2024-12-31T00:00:00.000Z' }), NOW);
    expect(stamped.decided_at).toBe('2024-12-31T00:00:00.000Z');
    expect(s.verdicts).toHaveLength(2);
  });
});

describe('verdicts the workflow decides itself', () => {
  it('no-judge: the policy approves, naming the action type', () => {
    const v = stateFor('memory_write', { tier: 'no-judge' }).noJudgeVerdict(NOW);
    expect(v).toMatchObject({
      verdict: 'APPROVE',
      reason: 'tier no-judge: memory_write needs no review',
      decided_by: 'policy',
      confidence: 1,
      tier: 'no-judge',
      decided_at: NOW,
      constraints: { require_human_review: false },
      escalation: null,
    });
  });

  it('judge unavailable: a CLARIFY with confidence 0 that asks for a person', () => {
    const s = stateFor();
    const v = s.judgeUnavailableVerdict('connection refused', NOW);
    expect(v).toMatchObject({
      verdict: 'CLARIFY',
      reason: 'the judge could not be reached: connection refused',
      decided_by: 'judge',
      confidence: 0,
      rule: 'judge.unavailable',
      constraints: { require_human_review: true },
    });
    expect(s.nextStep(v)).toBe('escalate');
  });

  it('lightweight: the pattern check decides and names its rule', () => {
    const v = stateFor('issue_comment', { tier: 'lightweight-approval' }).patternVerdict(NOW);
    expect(v.decided_by).toBe('rules');
    expect(v.rule).toBeTypeOf('string');
  });
});

describe('nextStep()', () => {
  it('a CLARIFY past the round limit gives up; before it, asks the actor', () => {
    const s = stateFor();
    const unclear = verdict('CLARIFY', 0.9, { reason: 'which issue?' });
    expect(s.nextStep(unclear)).toBe('clarify');
    s.applyClarification({ justification: 'one' });
    s.applyClarification({ justification: 'two' });
    expect(s.nextStep(unclear)).toBe('give-up');
    expect(s.clarifyExhaustedVerdict(unclear, NOW)).toMatchObject({
      verdict: 'REJECT',
      reason: 'still unclear after 2 clarify round(s): which issue?',
      decided_by: 'rules',
      rule: 'clarify.max-rounds',
    });
  });

  it('shadow mode executes whatever the verdict', () => {
    const s = new ProposalState(parseProposal(proposal('exec')), policy, 'wf', 'full-judge-review', true, 1);
    expect(s.nextStep(verdict('REJECT', 1))).toBe('execute');
  });
});

describe('clarification wait', () => {
  it('sets the deadline from the policy, clears it, and rejects by the clock when unanswered', () => {
    const s = stateFor();
    expect(s.openClarification(NOW_MS)).toBe(3_600_000);
    expect(s.deadlines.clarification).toBe('2025-01-01T01:00:00.000Z');
    expect(s.applyPendingClarification()).toBe(false);
    s.closeClarification();
    expect(s.deadlines.clarification).toBeNull();
    expect(s.clarifyTimeoutVerdict(NOW)).toMatchObject({
      verdict: 'REJECT',
      reason: 'no clarification before the deadline (1h)',
      decided_by: 'timeout',
    });
  });

  it('applies the clarification that arrived', () => {
    const s = stateFor();
    s.receiveClarification({ justification: 'now with the issue' });
    expect(s.applyPendingClarification()).toBe(true);
    expect(s.proposal.justification).toBe('now with the issue');
    expect(s.clarifyRounds).toBe(1);
    expect(s.pendingClarification).toBeNull();
  });
});

describe('escalation', () => {
  it('human-only: the dispute says a person must decide; the deadline comes from the policy', () => {
    const s = stateFor('financial_op', { tier: 'human-only', quorum: 2 });
    const notice = s.openEscalation(null, NOW_MS);
    expect(s.dispute).toEqual({
      reason: 'tier human-only: a person must decide',
      actor_position: s.proposal.justification,
      judge_position: 'no judge review for this tier',
      judge_confidence: null,
    });
    expect(s.deadlines.human).toBe('2025-01-02T00:00:00.000Z');
    expect(notice).toMatchObject({
      workflow_id: s.workflowId,
      tier: 'human-only',
      verdict: null,
      deadline: '2025-01-02T00:00:00.000Z',
      approvers: ['scott', 'alice', 'bob'],
      approvals_needed: 2,
    });
    s.closeEscalation();
    expect(s.deadlines.human).toBeNull();
  });

  it('an unsure judge: the reason names the confidence and the threshold', () => {
    const s = stateFor();
    s.openEscalation(verdict('APPROVE', 0.1, { reason: 'not sure' }), NOW_MS);
    expect(s.dispute).toMatchObject({
      reason: 'judge unsure (confidence 0.10 is below 0.3)',
      judge_position: 'not sure',
      judge_confidence: 0.1,
    });
  });

  it('a judge that asks for review says so', () => {
    const s = stateFor();
    s.openEscalation(verdict('APPROVE', 0.9, { constraints: { require_human_review: true } }), NOW_MS);
    expect(s.dispute?.reason).toBe('the judge asked for human review');
  });

  it('splits the wait at the reminder share', () => {
    expect(stateFor().humanWaits()).toEqual([43_200_000, 43_200_000]);
    const noReminder = testPolicy(baseDir, {
      escalation: { timeout: '24h', approvers: ['scott'], reminderAt: 0 },
    });
    const s = new ProposalState(parseProposal(proposal('exec')), noReminder, 'wf', 'full-judge-review', false, 1);
    expect(s.humanWaits()).toEqual([86_400_000]);
  });

  it('no decision in time: a REJECT by the clock', () => {
    expect(stateFor().humanOutcome(false, NOW)).toMatchObject({
      verdict: 'REJECT',
      reason: 'no human decision before the deadline (24h)',
      decided_by: 'timeout',
    });
  });

  it('the first rejecter decides a REJECT, even after approvals', () => {
    const s = stateFor('financial_op', { tier: 'human-only', quorum: 3 });
    s.addDecision({ decision: 'approve', approver: 'scott', via: 'cli' }, NOW);
    s.addDecision({ decision: 'reject', approver: 'alice', via: 'cli' }, NOW);
    s.addDecision({ decision: 'reject', approver: 'bob', via: 'cli', reason: 'too late' }, NOW);
    expect(s.humanOutcome(true, NOW)).toMatchObject({
      verdict: 'REJECT',
      reason: 'rejected by alice',
      decided_by: 'human:alice',
    });
  });

  it('a met quorum: APPROVE by the last approver, under the latest verdict constraints', () => {
    const s = stateFor('forgejo_pr_create', { quorum: 2 });
    s.recordVerdict(verdict('APPROVE', 0.9, { constraints: { require_human_review: true, max_lines: 40 } }), NOW);
    s.addDecision({ decision: 'approve', approver: 'scott', via: 'cli' }, NOW);
    s.addDecision({ decision: 'approve', approver: 'alice', via: 'cli' }, NOW);
    expect(s.humanOutcome(true, NOW)).toMatchObject({
      verdict: 'APPROVE',
      reason: 'approved by scott, alice',
      decided_by: 'human:alice',
      constraints: { require_human_review: true, max_lines: 40 },
    });
  });
});

describe('execution', () => {
  const result = (executor: string, status: ExecutionStatus) => ({
    status,
    executor,
    shadow: false,
    started_at: NOW,
    finished_at: NOW,
  });

  it('ends executed, failed or (no executor) approved', () => {
    const s = stateFor();
    expect(s.recordExecution(result('exec', 'succeeded'))).toBe('executed');
    expect(s.execution?.executor).toBe('exec');
    expect(s.recordExecution(result('exec', 'refused'))).toBe('failed');
    expect(s.recordExecution(result('none', 'succeeded'))).toBe('approved');
    expect(s.execution).toBeNull();
  });

  it('an executor that never reported back is uncertain, not succeeded, and people are told what to check', () => {
    const s = stateFor();
    expect(s.uncertainNotice()).toBeNull();
    const r = s.executorUnreachable('timeout', NOW, NOW);
    expect(r).toMatchObject({ status: 'uncertain', executor: 'unreachable' });
    expect(r.error).toBe(`the executor did not report back (timeout); ${UNCERTAIN_EXPLANATION}`);
    expect(s.recordExecution(r)).toBe('uncertain');
    expect(s.uncertainNotice()).toMatchObject({ execution: r, explanation: UNCERTAIN_EXPLANATION });
  });

  it('an uncertain execution is a final stage and status of its own', () => {
    const s = stateFor();
    s.setStage(s.recordExecution(result('exec', 'uncertain')));
    expect(s.toRecord()).toMatchObject({ stage: 'uncertain', status: 'uncertain' });
    expect(s.isSettled()).toBe(true);
  });
});

describe('Update input', () => {
  it('a decision is read with its defaults, as the validator accepted it', () => {
    expect(readDecision({ decision: 'approve', approver: 'scott' })).toEqual({
      decision: 'approve',
      approver: 'scott',
      via: 'api',
    });
  });

  it('malformed input refuses the Update with a non-retryable BadInput, never a ZodError', () => {
    for (const read of [() => readDecision({ decision: 'maybe', approver: 'scott' }), () => readClarification({})]) {
      let thrown: unknown;
      try {
        read();
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ApplicationFailure);
      expect(thrown).toMatchObject({ type: 'BadInput', nonRetryable: true });
    }
    expect(() => readDecision({ decision: 'maybe', approver: 'scott' })).toThrow(/decision/);
  });
});
