import { describe, expect, it } from 'vitest';
import { generateIdentity } from '../../src/identity/keys';
import type { HumanDecision } from '../../src/contracts/messages';
import { HumanDecisionSchema } from '../../src/contracts/messages';
import { signDecision } from '../../src/identity/sign-decision';
import { refuseDecisionSignature, signingKeyFor } from '../../src/identity/decision';
import { testPolicy } from '../helpers/system';

const WF = 'proposal-0123456789abcdef0123456789abcdef';
const scott = generateIdentity();
const bot = generateIdentity();
const mallory = generateIdentity();
const policy = testPolicy('/tmp', {
  escalation: {
    approvers: ['scott', 'ana', 'discord:123456789012345678'],
    approverKeys: { scott: scott.public_key },
    discordBotKey: bot.public_key,
  },
});
const approve = (approver: string, reason?: string): HumanDecision => ({
  decision: 'approve',
  approver,
  via: 'cli',
  ...(reason ? { reason } : {}),
});

describe('signed human decisions', () => {
  it('accepts a fresh decision signed by the approver for this workflow, and it passes the schema', () => {
    const d = signDecision(WF, approve('scott', 'budgeted'), scott);
    expect(HumanDecisionSchema.parse(d)).toEqual(d);
    expect(refuseDecisionSignature(policy, WF, d, Date.now())).toBeNull();
  });

  it('refuses an unsigned decision from an approver with a key', () => {
    expect(refuseDecisionSignature(policy, WF, approve('scott'), Date.now())).toBe(
      'scott must sign decisions (agent-judge decide --key <key file>)',
    );
  });

  it('refuses a signature by someone else, for another workflow, or over another reason', () => {
    expect(refuseDecisionSignature(policy, WF, signDecision(WF, approve('scott'), mallory), Date.now())).toMatch(
      /does not verify/,
    );
    const other = signDecision('proposal-ffffffffffffffffffffffffffffffff', approve('scott'), scott);
    expect(refuseDecisionSignature(policy, WF, other, Date.now())).toMatch(/does not verify/);
    const signed = signDecision(WF, approve('scott', 'small amount'), scott);
    expect(refuseDecisionSignature(policy, WF, { ...signed, reason: 'any amount' }, Date.now())).toMatch(
      /does not verify/,
    );
    expect(refuseDecisionSignature(policy, WF, { ...signed, decision: 'reject' }, Date.now())).toMatch(
      /does not verify/,
    );
  });

  it('refuses a stale signature', () => {
    const old = signDecision(WF, approve('scott'), scott, new Date(Date.now() - 10 * 60_000));
    expect(refuseDecisionSignature(policy, WF, old, Date.now())).toMatch(/stale/);
  });

  it('discord approvers are vouched for by the bot key', () => {
    expect(signingKeyFor(policy, 'discord:123456789012345678')).toBe(bot.public_key);
    const d: HumanDecision = { decision: 'approve', approver: 'discord:123456789012345678', via: 'discord' };
    expect(refuseDecisionSignature(policy, WF, d, Date.now())).toMatch(/must sign/);
    expect(refuseDecisionSignature(policy, WF, signDecision(WF, d, bot), Date.now())).toBeNull();
    expect(refuseDecisionSignature(policy, WF, signDecision(WF, d, mallory), Date.now())).toMatch(/does not verify/);
  });

  it('approvers without a key stay unsigned unless the policy requires signatures', () => {
    expect(refuseDecisionSignature(policy, WF, approve('ana'), Date.now())).toBeNull();
    const strict = testPolicy('/tmp', { escalation: { approvers: ['ana'], requireSignedDecisions: true } });
    expect(refuseDecisionSignature(strict, WF, approve('ana'), Date.now())).toBe(
      'decisions must be signed, and the policy has no key for ana',
    );
  });
});
