import { describe, expect, it } from 'vitest';
import {
  buttonCustomId,
  cleanReason,
  isProposalWorkflowId,
  MAX_CUSTOM_ID_LENGTH,
  modalCustomId,
  parseButtonCustomId,
  parseModalCustomId,
  parseRevokeGrantCustomId,
  revokeGrantCustomId,
} from '../../src/escalation/custom-id';
import { workflowIdFor } from '../helpers/escalation-notice';

const wf = workflowIdFor('custom-id');

describe('button custom_id', () => {
  it('round-trips every action and stays within Discord’s 100 characters', () => {
    for (const action of ['approve', 'reject', 'reject_reason'] as const) {
      const id = buttonCustomId(action, wf);
      expect(id.length).toBeLessThanOrEqual(MAX_CUSTOM_ID_LENGTH);
      expect(parseButtonCustomId(id)).toEqual({ action, workflowId: wf });
    }
  });

  it('refuses to build a button for something that is not a proposal workflow id', () => {
    expect(() => buttonCustomId('approve', 'circle-registry')).toThrow(/not a proposal workflow id/);
    expect(() => modalCustomId(`${wf}x`)).toThrow();
  });

  it.each([
    ['empty', ''],
    ['other app', 'ticket:approve:123'],
    ['old version', `aj:v0:approve:${wf}`],
    ['unknown action', `aj:v1:execute:${wf}`],
    ['upper-case hex', `aj:v1:approve:${wf.toUpperCase()}`],
    ['short id', `aj:v1:approve:proposal-${'a'.repeat(31)}`],
    ['long id', `aj:v1:approve:proposal-${'a'.repeat(33)}`],
    ['non-hex id', `aj:v1:approve:proposal-${'g'.repeat(32)}`],
    ['other workflow', 'aj:v1:approve:circle-registry'],
    ['trailing data', `aj:v1:approve:${wf}:extra`],
    ['trailing newline', `aj:v1:approve:${wf}\n`],
    ['leading space', ` aj:v1:approve:${wf}`],
    ['injected separator', `aj:v1:approve:${wf}:approve:${wf}`],
    ['modal id on a button', `aj:v1:reason:${wf}`],
    ['over 100 characters', `aj:v1:approve:${wf}${' '.repeat(60)}`],
  ])('rejects %s', (_name, raw) => {
    expect(parseButtonCustomId(raw)).toBeNull();
  });

  it('rejects values that are not strings', () => {
    for (const v of [undefined, null, 42, {}, ['aj:v1:approve:x']]) expect(parseButtonCustomId(v)).toBeNull();
  });

  it('accepts only the exact workflow id shape', () => {
    expect(isProposalWorkflowId(wf)).toBe(true);
    expect(isProposalWorkflowId('proposal-')).toBe(false);
    expect(isProposalWorkflowId(`${wf}\u0000`)).toBe(false);
  });
});

describe('modal custom_id', () => {
  it('round-trips and is distinct from every button', () => {
    expect(parseModalCustomId(modalCustomId(wf))).toEqual({ workflowId: wf });
    expect(parseModalCustomId(buttonCustomId('reject_reason', wf))).toBeNull();
    expect(parseButtonCustomId(modalCustomId(wf))).toBeNull();
  });

  it('rejects forged and oversized values', () => {
    expect(parseModalCustomId(`aj:v1:reason:${wf}x`)).toBeNull();
    expect(parseModalCustomId('x'.repeat(101))).toBeNull();
    expect(parseModalCustomId(7)).toBeNull();
  });
});

describe('reason text', () => {
  it('trims, strips control characters and bounds the length', () => {
    expect(cleanReason('  too risky \u0007 today \r\n')).toBe('too risky  today');
    expect(cleanReason('   ')).toBeUndefined();
    expect(cleanReason(undefined)).toBeUndefined();
    expect(cleanReason('x'.repeat(5000))).toHaveLength(1000);
  });
});

describe('"Revoke grant" custom_id', () => {
  const grantId = 'gabcdefghijklmnopqrst';

  it('round-trips a grant id and is no decision button', () => {
    const id = revokeGrantCustomId(grantId);
    expect(id).toBe(`aj:v1:revoke_grant:${grantId}`);
    expect(parseRevokeGrantCustomId(id)).toEqual({ grantId });
    expect(parseButtonCustomId(id)).toBeNull();
    expect(parseRevokeGrantCustomId(buttonCustomId('approve', wf))).toBeNull();
  });

  it.each([
    ['not a grant id', 'aj:v1:revoke_grant:g123'],
    ['upper case', `aj:v1:revoke_grant:${grantId.toUpperCase()}`],
    ['trailing data', `aj:v1:revoke_grant:${grantId}:x`],
    ['another version', `aj:v2:revoke_grant:${grantId}`],
    ['a proposal workflow id', `aj:v1:revoke_grant:${wf}`],
  ])('refuses %s', (_name, raw) => {
    expect(parseRevokeGrantCustomId(raw)).toBeNull();
  });

  it('refuses to build one for something that is not a grant id', () => {
    expect(() => revokeGrantCustomId('grant-gabcdefghijklmnopqrst')).toThrow(/not a grant id/);
  });
});
