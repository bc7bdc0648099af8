/**
 * The one refusal value (src/contracts/refusal.ts): made where a check says no, turned into an error only at a
 * boundary, its reason the exact text people read.
 */
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { BadInputError, PolicyError } from '../../src/contracts/errors';
import { FailureType } from '../../src/contracts/lifecycle';
import { refusal, refusalError, refused, type Checked } from '../../src/contracts/refusal';
import { refusalFailure } from '../../src/workflows/refusal';

describe('a refusal', () => {
  it('is a code and a reason; refused() wraps one, or makes one, as the refused branch of Checked', () => {
    const r = refusal('grant.expired', 'grant g1 is expired');
    expect(r).toEqual({ code: 'grant.expired', reason: 'grant g1 is expired' });
    const a: Checked<number> = refused(r);
    const b: Checked<number> = refused('grant.expired', 'grant g1 is expired');
    expect(a).toEqual({ ok: false, refusal: r });
    expect(b).toEqual(a);
  });

  it('becomes a BadInputError at a client or CLI boundary, worded there, or the error the boundary names', () => {
    const r = refusal('bad-input', 'week: 2026-W54 does not exist (2026 has 53 ISO weeks)');
    const plain = refusalError(r);
    expect(plain).toBeInstanceOf(BadInputError);
    expect(plain.message).toBe('week: 2026-W54 does not exist (2026 has 53 ISO weeks)');
    expect(refusalError(r, '--').message).toBe('--week: 2026-W54 does not exist (2026 has 53 ISO weeks)');
    const policy = refusalError(refusal('unknown-key', 'not listed'), 'AGENT_JUDGE_CAPABILITY_KEY: ', PolicyError);
    expect(policy).toBeInstanceOf(PolicyError);
    expect(policy.message).toBe('AGENT_JUDGE_CAPABILITY_KEY: not listed');
  });

  it('becomes a non-retryable failure in workflow code: the reason, BadInput unless named, the code as detail', () => {
    const f = refusalFailure(refusal('not-approver', 'mallory is not an approver for this proposal'));
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f).toMatchObject({
      message: 'mallory is not an approver for this proposal',
      type: FailureType.BadInput,
      nonRetryable: true,
      details: ['not-approver'],
    });
    const circle = refusalFailure(refusal('replay', 'replayed'), 'retire: ', FailureType.CircleRefused);
    expect(circle).toMatchObject({ message: 'retire: replayed', type: FailureType.CircleRefused, details: ['replay'] });
  });
});
