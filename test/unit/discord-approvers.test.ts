import { describe, expect, it } from 'vitest';
import { discordApproverId, discordUserIdOf, discordUserIds, isDiscordApprover } from '../../src/escalation/approvers';

const alice = '100000000000000001';
const bob = '100000000000000002';

describe('Discord approvers', () => {
  const approvers = ['scott', `discord:${alice}`, `discord:${alice}`, 'discord:not-a-number', `discord:${bob}`];

  it('lists the Discord user ids once each, ignoring other and malformed entries', () => {
    expect(discordUserIds(approvers)).toEqual([alice, bob]);
    expect(discordUserIdOf('scott')).toBeNull();
    expect(discordUserIdOf('discord:12')).toBeNull();
  });

  it('accepts only exact discord:<id> entries', () => {
    expect(isDiscordApprover(approvers, alice)).toBe(true);
    expect(isDiscordApprover(approvers, '100000000000000003')).toBe(false);
    // Not a prefix match, not the plain id, not another approver's name.
    expect(isDiscordApprover(approvers, alice.slice(0, -1))).toBe(false);
    expect(isDiscordApprover([alice], alice)).toBe(false);
    expect(isDiscordApprover(approvers, 'scott')).toBe(false);
    expect(isDiscordApprover(approvers, `${alice} `)).toBe(false);
    expect(isDiscordApprover(approvers, undefined)).toBe(false);
  });

  it('builds approver ids only from snowflakes', () => {
    expect(discordApproverId(alice)).toBe(`discord:${alice}`);
    expect(() => discordApproverId('alice')).toThrow();
  });
});
