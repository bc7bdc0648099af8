import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompliancePolicy } from '../../src/contracts/policy';
import { parseProposal } from '../../src/contracts/proposal';
import type { Tier, Verdict } from '../../src/contracts/verdict';
import { ProposalState } from '../../src/workflows/proposal-state';
import { proposal, testPolicy } from '../helpers/system';

let baseDir: string;
let policy: CompliancePolicy;

beforeAll(() => {
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
    s.clarifyRounds = 1;
    expect(s.canClarify()).toBe(true);
    s.clarifyRounds = 2;
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
    expect(s.refuseClarification({ justification: 'more' })).toBe(
      `proposal ${s.proposal.proposal_id} is not awaiting clarification (stage: judging)`,
    );
    s.setStage('rejected');
    expect(s.refuseClarification({ justification: 'more' })).toMatch(/\(stage: rejected\)$/);
  });

  it('refuses a second clarification while one is being judged', () => {
    const s = awaiting();
    s.pendingClarification = { justification: 'first' };
    expect(s.refuseClarification({ justification: 'second' })).toBe('a clarification is already being judged');
  });

  it('refuses widening max_lines; leaving it out keeps the earlier limit', () => {
    const s = awaiting();
    expect(
      s.refuseClarification({
        scope_claim: { files_only: ['src/schema/'], max_lines: 81, no_existing_code_deletion: true },
      }),
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
      }),
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
      }),
    ).toMatch(/files_only may only narrow/);
  });

  it.each([['src/schema/../auth/'], ['src/schema/../../'], ['src/schema/%2E%2E/auth/'], ['src/schema\\..\\auth\\']])(
    'refuses a files_only entry %j that climbs out of the earlier scope',
    (wider) => {
      const s = awaiting();
      expect(
        s.refuseClarification({ scope_claim: { files_only: [wider], max_lines: 80, no_existing_code_deletion: true } }),
      ).toMatch(/^scope_claim\.files_only may only narrow/);
    },
  );

  it('refuses dropping no_existing_code_deletion', () => {
    const s = awaiting();
    expect(
      s.refuseClarification({
        scope_claim: { files_only: ['src/schema/'], max_lines: 80, no_existing_code_deletion: false },
      }),
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
    s.pendingClarification = { justification: 'x' };
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
    expect(s.refuseDecision({ decision: 'approve', approver: 'scott', via: 'cli' }, Date.now())).toBe(
      `proposal ${s.proposal.proposal_id} is not awaiting a human decision (stage: judging)`,
    );
  });

  it('refuses anyone not listed as an approver', () => {
    expect(awaiting().refuseDecision({ decision: 'approve', approver: 'mallory', via: 'cli' }, Date.now())).toBe(
      'mallory is not an approver for this proposal',
    );
  });

  it('refuses the same approver twice', () => {
    const s = awaiting(2);
    expect(s.refuseDecision({ decision: 'approve', approver: 'scott', via: 'cli' }, Date.now())).toBeNull();
    expect(s.addDecision({ decision: 'approve', approver: 'scott', via: 'cli' }, '2025-01-01T00:00:00.000Z')).toBe(
      'pending',
    );
    expect(s.refuseDecision({ decision: 'approve', approver: 'scott', via: 'discord' }, Date.now())).toBe(
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

describe('snapshot()', () => {
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
    expect(s.snapshot().status).toBe(status);
    expect(s.snapshot().stage).toBe(stage);
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
    s.verdicts.push(first, second);
    s.clarifyRounds = 1;
    s.deadlines.clarification = '2025-01-01T01:00:00.000Z';
    const snap = s.snapshot();
    expect(snap).toMatchObject({
      proposal_id: s.proposal.proposal_id,
      workflow_id: 'proposal-0123456789abcdef0123456789abcdef',
      status: 'pending',
      tier: 'full-judge-review',
      shadow: false,
      verdict: second,
      verdicts: [first, second],
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
    expect(stateFor().snapshot().verdict).toBeNull();
  });
});
