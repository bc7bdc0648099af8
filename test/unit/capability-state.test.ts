/**
 * The proposal workflow's capability decisions, without a server: what a token binds for ordinary
 * proposals and MCP tool calls, and which redemptions the Update validator refuses (and that a
 * refusal changes nothing).
 */
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  actionDigest,
  EXECUTOR_REDEEMER,
  issuedFor,
  mcpToolCallDigest,
  type IssuedCapability,
} from '../../src/contracts/capability';
import { parseProposal } from '../../src/contracts/proposal';
import { defaultPolicyWith } from '../../src/policy/load';
import { capabilityBinding, ProposalState } from '../../src/workflows/proposal/state';
import { readRedemption, readSettleLease } from '../../src/workflows/proposal/messages';
import { proposal } from '../helpers/system';

const WID = 'proposal-0123456789abcdef0123456789abcdef';
const T0 = Date.parse('2026-12-01T03:00:00Z');

function approvedState(executedHere = false, overrides: Record<string, unknown> = {}) {
  const p = parseProposal(proposal('forgejo_pr_create', overrides));
  const s = new ProposalState(p, defaultPolicyWith(), WID, 'full-judge-review', false, 1);
  const request = s.capabilityRequest(600_000);
  const issued: IssuedCapability = {
    token: 'v4.public.issued-token',
    kid: 'k1',
    claims: {
      sub: request.sub,
      aud: request.aud,
      jti: 'jti-1',
      iat: new Date(T0).toISOString(),
      exp: new Date(T0 + 600_000).toISOString(),
      wid: WID,
      policy_sha256: request.policy_sha256,
      action_sha256: request.action_sha256,
    },
  };
  s.recordCapability(issued, executedHere);
  const ok = {
    token: issued.token,
    audience: request.aud,
    action_sha256: request.action_sha256,
    redeemer: 'cli',
    nonce: 'n1',
  };
  return { s, p, request, ok };
}

describe('capability binding', () => {
  it('binds the agent, executor audience and action digest of an ordinary proposal', () => {
    const { p, request } = approvedState();
    expect(request).toMatchObject({ workflow_id: WID, sub: '@engineering', aud: 'executor:forgejo_pr_create' });
    expect(request.action_sha256).toBe(actionDigest(p));
    expect(request.policy_sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('binds an unmapped MCP tool call to its server and the call itself', () => {
    const call = { tool: 'write_file', tool_definition_hash: 'd'.repeat(64), arguments: { path: 'a.txt' } };
    const p = parseProposal(
      proposal('mcp_tool_call', {
        target: { server: 'filesystem', tool: call.tool },
        parameters: { arguments: call.arguments, tool_definition_hash: call.tool_definition_hash },
      }),
    );
    expect(capabilityBinding(p)).toEqual({ aud: 'mcp:filesystem', action_sha256: mcpToolCallDigest(call) });
  });
});

describe('a token signed in the policy snapshot is used only for exactly its request (issuedFor)', () => {
  it('matches the request it was signed for', () => {
    const { s, request } = approvedState();
    expect(issuedFor(tokenOf(s), request)).toBe(true);
  });

  it.each([
    ['another run', { workflow_id: 'proposal-ffffffffffffffffffffffffffffffff' }],
    ['another agent', { sub: '@someone-else' }],
    ['another audience', { aud: 'mcp:filesystem' }],
    ['another action', { action_sha256: 'f'.repeat(64) }],
    ['another policy', { policy_sha256: 'e'.repeat(64) }],
    ['another lifetime', { ttl_ms: 60_000 }],
  ])('refuses it for %s', (_what, change) => {
    const { s, request } = approvedState();
    expect(issuedFor(tokenOf(s), { ...request, ...change })).toBe(false);
  });
});

/** The token a state recorded, as the issuing activity returned it. */
function tokenOf(s: ProposalState): IssuedCapability {
  const c = s.capability;
  if (!c) throw new Error('no capability recorded');
  return {
    token: c.token,
    kid: c.kid,
    claims: {
      sub: '@engineering',
      aud: c.audience,
      jti: c.token_id,
      iat: c.issued_at,
      exp: c.expires_at,
      wid: WID,
      policy_sha256: s.capabilityRequest(600_000).policy_sha256,
      action_sha256: c.action_sha256,
    },
  };
}

describe('redemption', () => {
  it('accepts the issued token once, for its audience and action, before it expires', () => {
    const { s, ok } = approvedState();
    expect(s.awaitsRedemption()).toBe(true);
    expect(s.refuseRedemption(ok, T0 + 1000)).toBeNull();
    const r = s.redeemCapability(ok, new Date(T0 + 1000).toISOString());
    expect(r).toMatchObject({ token_id: 'jti-1', redeemer: 'cli', nonce: 'n1' });
    expect(s.awaitsRedemption()).toBe(false);
    expect(s.refuseRedemption({ ...ok, nonce: 'n2' }, T0 + 2000)?.reason).toMatch(/already redeemed .* by cli/);
    expect(s.toRecord().capability?.redemption).toEqual(r);
  });

  it("records agent-judge's executor as redeemer as the workflow hands it the token; later ones are refused", () => {
    const { s, ok } = approvedState(true);
    const at = new Date(T0 + 10).toISOString();
    const r = s.redeemForExecutor(at);
    expect(r).toEqual({
      token_id: 'jti-1',
      audience: 'executor:forgejo_pr_create',
      redeemer: EXECUTOR_REDEEMER,
      nonce: `executor:${WID}:jti-1`,
      redeemed_at: at,
    });
    expect(s.refuseRedemption(ok, T0 + 20)?.reason).toMatch(
      new RegExp(`already redeemed at .* by ${EXECUTOR_REDEEMER}`),
    );
    expect(s.toRecord().capability?.redemption).toEqual(r);
    // Only for a token agent-judge executes, and only once.
    expect(() => s.redeemForExecutor(at)).toThrow(/not an unredeemed one/);
    expect(() => approvedState(false).s.redeemForExecutor(at)).toThrow(/not an unredeemed one/);
  });

  it('refuses another token, audience, action or an expired token, changing nothing', () => {
    const { s, ok } = approvedState();
    expect(s.refuseRedemption({ ...ok, token: 'v4.public.other' }, T0)?.reason).toMatch(
      /not issued for this proposal run/,
    );
    expect(s.refuseRedemption({ ...ok, audience: 'mcp:x' }, T0)?.reason).toMatch(
      /for executor:forgejo_pr_create, not mcp:x/,
    );
    expect(s.refuseRedemption({ ...ok, action_sha256: 'c'.repeat(64) }, T0)?.reason).toMatch(/not the approved one/);
    expect(s.refuseRedemption(ok, T0 + 600_000)?.reason).toMatch(/expired at/);
    expect(s.capability?.redemption).toBeNull();
    expect(s.redemptionWaitMs(T0)).toBe(600_000);
    s.expireCapability(new Date(T0 + 600_000).toISOString());
    expect(s.awaitsRedemption()).toBe(false);
    expect(s.refuseRedemption(ok, T0)?.reason).toMatch(/expired/);
  });

  it('does not hold the run open for an action agent-judge executes, and refuses before any token', () => {
    expect(approvedState(true).s.awaitsRedemption()).toBe(false);
    const fresh = new ProposalState(
      parseProposal(proposal('memory_write')),
      defaultPolicyWith(),
      WID,
      'no-judge',
      false,
      1,
    );
    expect(fresh.refuseRedemption(approvedState().ok, T0)?.reason).toMatch(/has no capability token/);
  });

  it('reads the Update argument strictly, as a non-retryable BadInput', () => {
    const { ok } = approvedState();
    expect(readRedemption(ok)).toEqual(ok);
    for (const bad of [null, [], { ...ok, nonce: '' }, { ...ok, token: 5 }, { ...ok, redeemer: 'x'.repeat(300) }]) {
      expect(() => readRedemption(bad)).toThrow(ApplicationFailure);
    }
  });

  it('redeeming with lease: forwarding also leases a caller-performed action, once, in the same step', () => {
    const performer = { by: 'caller', call: 'e'.repeat(64), sequence: 0 };
    const { s, ok } = approvedState(false, { performer });
    s.openCallerWindow(new Date(T0 + 600_000).toISOString());
    const leasing = { ...ok, lease: 'forwarding' as const };
    expect(readRedemption(leasing)).toEqual(leasing);
    expect(() => readRedemption({ ...ok, lease: 'ok' })).toThrow(/lease: expected "forwarding"/);
    expect(s.refuseRedemption(leasing, T0)).toBeNull();
    s.redeemCapability(leasing, new Date(T0).toISOString());
    expect(s.caller).toMatchObject({ forwarded_at: new Date(T0).toISOString(), outcome: null });
    // Leased: the separate lease is refused now, as a second performance would be.
    expect(s.refuseCallerOutcome({ outcome: 'forwarding' })?.reason).toMatch(/already forwarded once/);

    // Leased first (callerOutcome forwarding), a leasing redemption is refused and changes nothing.
    const other = approvedState(false, { performer });
    other.s.openCallerWindow(new Date(T0 + 600_000).toISOString());
    other.s.recordCallerOutcome({ outcome: 'forwarding' }, new Date(T0).toISOString());
    expect(other.s.refuseRedemption(leasing, T0)?.reason).toMatch(/already forwarded once/);
    expect(other.s.capability?.redemption).toBeNull();
    // An ordinary redemption of an ordinary proposal ignores leases it was not asked for.
    const plain = approvedState();
    expect(plain.s.refuseRedemption(plain.ok, T0)).toBeNull();
  });
});

describe('the settling Update leases an approval for the MCP proxy (no redemption round trip)', () => {
  const performer = { by: 'caller', call: 'e'.repeat(64), sequence: 0 };
  function settledApproved() {
    const st = approvedState(false, { performer });
    st.s.openCallerWindow(new Date(T0 + 600_000).toISOString());
    const lease = {
      lease: 'forwarding' as const,
      audience: st.request.aud,
      action_sha256: st.request.action_sha256,
      redeemer: 'mcp-proxy',
      nonce: 'forward:w:1',
      lease_before: new Date(T0 + 5000).toISOString(),
    };
    return { ...st, lease };
  }

  it("redeems the run's own token and leases the one forwarding, under the caller's nonce", () => {
    const { s, lease } = settledApproved();
    expect(s.leaseOnSettle(lease, T0 + 1000, new Date(T0 + 1000).toISOString())).toBe(true);
    expect(s.capability?.redemption).toMatchObject({ redeemer: 'mcp-proxy', nonce: 'forward:w:1', token_id: 'jti-1' });
    expect(s.caller?.forwarded_at).toBe(new Date(T0 + 1000).toISOString());
    // Exactly once: a second settle, a separate lease or a redemption are all refused now.
    expect(s.leaseOnSettle({ ...lease, nonce: 'forward:w:2' }, T0 + 1500, new Date(T0 + 1500).toISOString())).toBe(
      false,
    );
    expect(s.capability?.redemption?.nonce).toBe('forward:w:1');
    expect(s.refuseCallerOutcome({ outcome: 'forwarding' })?.reason).toMatch(/already forwarded once/);
  });

  it('leases nothing for another action or audience, after lease_before, or once leased elsewhere', () => {
    const cases: Array<(x: ReturnType<typeof settledApproved>) => boolean> = [
      ({ s, lease }) => s.leaseOnSettle({ ...lease, action_sha256: 'c'.repeat(64) }, T0, new Date(T0).toISOString()),
      ({ s, lease }) => s.leaseOnSettle({ ...lease, audience: 'mcp:other' }, T0, new Date(T0).toISOString()),
      ({ s, lease }) => s.leaseOnSettle(lease, T0 + 5001, new Date(T0 + 5001).toISOString()),
      ({ s, lease }) => {
        s.recordCallerOutcome({ outcome: 'forwarding' }, new Date(T0).toISOString());
        return s.leaseOnSettle(lease, T0, new Date(T0).toISOString());
      },
    ];
    for (const attempt of cases) {
      const x = settledApproved();
      expect(attempt(x)).toBe(false);
      expect(x.s.capability?.redemption).toBeNull();
    }
  });

  it('leases nothing when the run settled without an approval for its caller to perform', () => {
    // Approved for agent-judge's executor (no caller window): the caller has nothing to lease.
    const { s, request } = approvedState();
    const lease = {
      lease: 'forwarding' as const,
      audience: request.aud,
      action_sha256: request.action_sha256,
      redeemer: 'mcp-proxy',
      nonce: 'n',
      lease_before: new Date(T0 + 5000).toISOString(),
    };
    expect(s.leaseOnSettle(lease, T0, new Date(T0).toISOString())).toBe(false);
    expect(s.capability?.redemption).toBeNull();
    // Settled awaiting a person: no token yet.
    const waiting = new ProposalState(
      parseProposal(proposal('forgejo_pr_create', { performer })),
      defaultPolicyWith(),
      WID,
      'human-only',
      false,
      1,
    );
    expect(waiting.leaseOnSettle(lease, T0, new Date(T0).toISOString())).toBe(false);
  });

  it('reads the Update argument strictly, as a non-retryable BadInput', () => {
    const { lease } = settledApproved();
    expect(readSettleLease(lease)).toEqual(lease);
    for (const bad of [
      null,
      [],
      { ...lease, lease: 'ok' },
      { ...lease, nonce: '' },
      { ...lease, audience: 7 },
      { ...lease, lease_before: 'tomorrow' },
      { ...lease, redeemer: 'x'.repeat(300) },
    ]) {
      expect(() => readSettleLease(bad)).toThrow(ApplicationFailure);
    }
  });
});
