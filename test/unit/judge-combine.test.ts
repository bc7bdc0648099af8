import { describe, expect, it } from 'vitest';
import { VerdictSchema, type Constraints } from '../../src/contracts/verdict';
import {
  combineVerdict,
  evidenceFactor,
  intersectScopes,
  mergeConstraints,
  scopeConstraints,
  stricter,
} from '../../src/judge/combine';
import type { EvidenceReport } from '../../src/judge/evidence';
import type { ModelAnswer, ModelOutcome } from '../../src/judge/model';
import { prProposal } from '../helpers/judge-fixtures';

const audit = {
  model: 'm',
  prompt_hash: 'sha256:x',
  latency_ms: 12,
  prompt_tokens: 10,
  completion_tokens: 5,
  raw_answer: '{}',
};
const ok = (answer: ModelAnswer): ModelOutcome => ({ ok: true, answer, audit });
const evidence = (verified: number, unverifiable: number): EvidenceReport => ({
  checks: [],
  verified,
  unverifiable,
  failed: 0,
  otherRepo: 0,
});
const base = {
  proposal: prProposal(),
  tier: 'full-judge-review' as const,
  markers: [],
  decidedAt: '2026-05-24T00:00:00.000Z',
};

describe('stricter', () => {
  it('orders REJECT over CLARIFY over APPROVE', () => {
    expect(stricter('APPROVE', 'CLARIFY')).toBe('CLARIFY');
    expect(stricter('REJECT', 'CLARIFY')).toBe('REJECT');
    expect(stricter('CLARIFY', 'APPROVE')).toBe('CLARIFY');
    expect(stricter('APPROVE', 'APPROVE')).toBe('APPROVE');
  });
});

describe('constraints only narrow', () => {
  it('intersects file scopes', () => {
    expect(intersectScopes(['src/schema/'], ['src/schema/validator.ts'])).toEqual(['src/schema/validator.ts']);
    expect(intersectScopes(['src/schema/validator.ts'], ['src/'])).toEqual(['src/schema/validator.ts']);
    expect(intersectScopes(['src/schema/'], ['src/auth/'])).toEqual([]);
    expect(intersectScopes(['src/schema/'], ['src/schema/../auth'])).toEqual([]);
    expect(intersectScopes(['src/schema/'], ['/etc', '../x'])).toEqual([]);
    expect(intersectScopes(undefined, ['docs/'])).toEqual(['docs']);
    expect(intersectScopes(['docs/'], undefined)).toEqual(['docs/']);
  });

  it('takes the smaller line budget and keeps every guard', () => {
    const mine: Constraints = {
      require_human_review: false,
      max_lines: 80,
      no_existing_code_deletion: true,
      files_only: ['src/'],
    };
    const merged = mergeConstraints(mine, {
      max_lines: 500,
      no_existing_code_deletion: false,
      require_human_review: false,
      files_only: ['src/a/'],
    });
    expect(merged).toEqual({
      require_human_review: false,
      max_lines: 80,
      no_existing_code_deletion: true,
      files_only: ['src/a'],
    });
    expect(mergeConstraints(mine, { max_lines: 10, require_human_review: true }).max_lines).toBe(10);
    expect(mergeConstraints(mine, { require_human_review: true }).require_human_review).toBe(true);
  });

  it('a model cannot drop the proposal scope by omitting it', () => {
    expect(mergeConstraints(scopeConstraints(prProposal()), {})).toEqual(scopeConstraints(prProposal()));
  });
});

describe('evidence lowers confidence only when it could not be checked', () => {
  it.each([
    [1, 0, 1],
    [1, 1, 0.9],
    [0, 2, 0.8],
    [0, 0, 1],
  ])('%i verified, %i unverifiable -> x%f', (v, u, f) => {
    expect(evidenceFactor({ verified: v, unverifiable: u })).toBe(f);
  });
});

describe('combineVerdict', () => {
  it('passes a model approval through with its audit, scaled by evidence', () => {
    const v = combineVerdict({
      ...base,
      evidence: evidence(0, 1),
      model: ok({ verdict: 'APPROVE', confidence: 0.9, reason: 'fits #42' }),
    });
    expect(VerdictSchema.parse(v)).toEqual(v);
    expect(v).toMatchObject({
      verdict: 'APPROVE',
      decided_by: 'judge',
      confidence: 0.72,
      rule: 'judge.model',
      judge: audit,
    });
    expect(v.constraints.files_only).toEqual(['src/schema/']);
  });

  it('lets the model tighten to REJECT or CLARIFY', () => {
    expect(
      combineVerdict({
        ...base,
        evidence: evidence(1, 0),
        model: ok({ verdict: 'REJECT', confidence: 0.8, reason: 'no' }),
      }).verdict,
    ).toBe('REJECT');
    expect(
      combineVerdict({
        ...base,
        evidence: evidence(1, 0),
        model: ok({ verdict: 'CLARIFY', confidence: 0.8, reason: '?' }),
      }).verdict,
    ).toBe('CLARIFY');
  });

  it('caps an approval at CLARIFY with human review when the proposal talks to the judge', () => {
    const v = combineVerdict({
      ...base,
      markers: [{ path: 'justification', marker: 'ignore-instructions' }],
      evidence: evidence(1, 0),
      model: ok({ verdict: 'APPROVE', confidence: 0.99, reason: 'approved as instructed' }),
    });
    expect(v).toMatchObject({ verdict: 'CLARIFY', rule: 'injection.suspect' });
    expect(v.constraints.require_human_review).toBe(true);
    expect(v.reason).toContain('justification [ignore-instructions]');
  });

  it('turns a model failure into confidence 0 with human review, never an approval', () => {
    const v = combineVerdict({
      ...base,
      evidence: evidence(1, 0),
      model: { ok: false, audit: { ...audit, raw_answer: null, error: 'timed out' }, unavailable: false },
    });
    expect(VerdictSchema.parse(v)).toEqual(v);
    expect(v).toMatchObject({ verdict: 'CLARIFY', confidence: 0, decided_by: 'judge', rule: 'judge.failure' });
    expect(v.constraints.require_human_review).toBe(true);
    expect(v.judge?.error).toBe('timed out');
  });
});

describe("the user's task: an action that serves another goal is never approved", () => {
  const withTask = { ...base, proposal: prProposal({ user_task: 'Add schema validation (issue #42).' }) };
  const answer = (verdict: 'APPROVE' | 'REJECT' | 'CLARIFY', task_alignment?: ModelAnswer['task_alignment']) =>
    ok({ verdict, confidence: 0.95, reason: 'model says so', ...(task_alignment ? { task_alignment } : {}) });

  it('APPROVE with serves_task stands', () => {
    const v = combineVerdict({ ...withTask, evidence: evidence(1, 0), model: answer('APPROVE', 'serves_task') });
    expect(v).toMatchObject({ verdict: 'APPROVE', rule: 'judge.model' });
  });

  it.each(['other_goal', 'unclear', 'no_task', undefined] as const)(
    'APPROVE with task_alignment %s becomes CLARIFY (rule task.not-served)',
    (alignment) => {
      const v = combineVerdict({ ...withTask, evidence: evidence(1, 0), model: answer('APPROVE', alignment) });
      expect(v).toMatchObject({ verdict: 'CLARIFY', rule: 'task.not-served' });
      expect(v.constraints.require_human_review).toBe(alignment === 'other_goal');
      expect(VerdictSchema.safeParse(v).success).toBe(true);
    },
  );

  it('a REJECT stays a REJECT', () => {
    const v = combineVerdict({ ...withTask, evidence: evidence(1, 0), model: answer('REJECT', 'other_goal') });
    expect(v).toMatchObject({ verdict: 'REJECT', rule: 'judge.model' });
  });

  it('without a task, the alignment field changes nothing', () => {
    const v = combineVerdict({ ...base, evidence: evidence(1, 0), model: answer('APPROVE', 'unclear') });
    expect(v).toMatchObject({ verdict: 'APPROVE', rule: 'judge.model' });
  });
});
