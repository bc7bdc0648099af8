import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateIdentity, newNonce, signBytes } from '../../src/identity/keys';
import { SIGNATURE_WINDOW_MS } from '../../src/identity/verify';
import { operatorSigningBytes, type OperatorAction } from '../../src/circles/operator';
import { signStatement } from '../../src/circles/sign';
import { RegistryState, type RegistryHandover } from '../../src/circles/state';
import { knockBy, membershipBy, newState } from '../helpers/circles-fixtures';

describe('registration and spawning', () => {
  it('a top-level agent gets a new circle; its sub-agents and their sub-agents join that circle', () => {
    const { state, top, sub } = newState();
    const A = top();
    const B = top();
    expect(A.circle).not.toBe(B.circle);
    const a1 = sub(A);
    const a11 = sub(a1);
    expect(a1.circle).toBe(A.circle);
    expect(a11.circle).toBe(A.circle);
    expect(state.agent(a11.key.amid)).toMatchObject({
      role: 'sub-agent',
      parent_amid: a1.key.amid,
      circle_id: A.circle,
      status: 'active',
    });
  });

  it('refuses registering the same key twice', () => {
    const { state, top, now } = newState();
    const A = top();
    expect(state.registerTopLevel({ public_key: A.key.public_key }, now)).toMatchObject({
      ok: false,
      refusal: { code: 'already-registered' },
    });
  });

  it('refuses forged and mismatched membership statements, records each, and changes nothing', () => {
    const { state, top, sub, now, events } = newState();
    const A = top();
    const B = top();
    const a1 = sub(A);
    const child = generateIdentity();
    const before = JSON.stringify(state.tree());
    const cases: Array<[ReturnType<typeof membershipBy>, string, RegExp]> = [
      // a sub-agent claims another circle: it signs for parent B with its own key
      [
        membershipBy(a1.key, child.public_key, B.circle, { parentAmid: B.key.amid }),
        'bad-signature',
        /not signed by the registered key of parent/,
      ],
      // the real parent A signs, but claims B's circle
      [
        membershipBy(A.key, child.public_key, B.circle),
        'circle-mismatch',
        new RegExp(`claims circle ${B.circle} but parent`),
      ],
      // signed by the wrong parent
      [membershipBy(B.key, child.public_key, A.circle, { parentAmid: A.key.amid }), 'bad-signature', /not signed/],
      // child AMID not derived from the child key
      [
        membershipBy(A.key, child.public_key, A.circle, { childAmid: B.key.amid }),
        'amid-mismatch',
        /not derived from child_public_key/,
      ],
      // stale statement
      [
        membershipBy(A.key, child.public_key, A.circle, { time: now - 3_600_000 }),
        'stale',
        /3600s old; the freshness window is 300s/,
      ],
      // unknown parent
      [membershipBy(child, generateIdentity().public_key, A.circle), 'unknown-parent', /is not a registered agent/],
      // re-spawning an existing agent under another parent
      [membershipBy(B.key, a1.key.public_key, B.circle), 'already-registered', /already registered/],
    ];
    for (const [statement, code, reason] of cases) {
      const r = state.spawnSubAgent(statement, now);
      expect(r).toMatchObject({ ok: false, refusal: { code } });
      expect(r.ok ? '' : r.refusal.reason).toMatch(reason);
    }
    expect(JSON.stringify(state.tree())).toBe(before);
    expect(events.map((e) => [e.kind, e.code])).toEqual(cases.map(([, code]) => ['spawn-refused', code]));
  });

  it('a retired parent cannot spawn', () => {
    const { state, top, now } = newState();
    const A = top();
    state.retire({ amid: A.key.amid }, now);
    expect(state.spawnSubAgent(membershipBy(A.key, generateIdentity().public_key, A.circle), now)).toMatchObject({
      ok: false,
      refusal: { code: 'parent-retired' },
    });
  });
});

describe('KNOCK', () => {
  it('checks signature, freshness and replay before the policy', () => {
    const { state, top, sub, now } = newState();
    const A = top();
    const a1 = sub(A);
    const knock = knockBy(a1.key, A.key.amid, { time: now });
    expect(state.knock(knock, now)).toMatchObject({ allowed: true, code: 'parent' });
    expect(state.knock(knock, now + 1000)).toMatchObject({ allowed: false, code: 'replay' });
    expect(state.knock(knockBy(a1.key, A.key.amid, { time: now - 31_000 }), now)).toMatchObject({
      allowed: false,
      code: 'stale',
    });
    expect(state.knock(knockBy(a1.key, A.key.amid, { time: now + 31_000 }), now).reason).toMatch(
      /31s in the future; the freshness window is 30s/,
    );
    const forged = { ...knockBy(a1.key, A.key.amid), statement: { ...knock.statement, nonce: newNonce() } };
    expect(state.knock(forged, now)).toMatchObject({ allowed: false, code: 'bad-signature' });
    // A knock claiming to come from a1 but signed by someone else's key.
    const impostor = generateIdentity();
    const claim = { from: a1.key.amid, to: A.key.amid, time: now, nonce: newNonce() };
    expect(
      state.knock({ statement: claim, signature: signStatement('knock', claim, impostor.private_key) }, now),
    ).toMatchObject({
      allowed: false,
      code: 'bad-signature',
      reason: `knock is not signed by the registered key of ${a1.key.amid}`,
    });
    expect(state.knock(knockBy(impostor, A.key.amid), now)).toMatchObject({ allowed: false, code: 'unknown-caller' });
  });

  it("a forged knock cannot burn the real caller's nonce", () => {
    const { state, top, sub, now } = newState();
    const A = top();
    const a1 = sub(A);
    const real = knockBy(a1.key, A.key.amid, { time: now });
    const fake = {
      statement: real.statement,
      signature: signStatement('knock', real.statement, generateIdentity().private_key),
    };
    expect(state.knock(fake, now).code).toBe('bad-signature');
    expect(state.knock(real, now)).toMatchObject({ allowed: true });
  });

  it('forgets nonces after twice the window and rate-limits a caller that floods', () => {
    const { state, top, sub, now } = newState({ knockWindowMs: 1000, maxKnocksPerCallerWindow: 3 });
    const A = top();
    const a1 = sub(A);
    for (let i = 0; i < 3; i++) expect(state.knock(knockBy(a1.key, A.key.amid, { time: now }), now).allowed).toBe(true);
    const flood = state.knock(knockBy(a1.key, A.key.amid, { time: now }), now);
    expect(flood).toMatchObject({ allowed: false, code: 'rate-limited' });
    expect(flood.reason).toContain('more than 3 signed messages within 2s');
    const later = now + 2001;
    expect(state.knock(knockBy(a1.key, A.key.amid, { time: later }), later)).toMatchObject({ allowed: true });
    expect(state.handover().nonces).toHaveLength(1);
  });

  it('denials are governance events; allowed knocks are not', () => {
    const { state, top, sub, now, events } = newState();
    const A = top();
    const B = top();
    const a1 = sub(A);
    const b1 = sub(B);
    state.knock(knockBy(a1.key, A.key.amid), now);
    state.knock(knockBy(a1.key, b1.key.amid), now);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kind: 'knock-denied', code: 'cross-circle', from: a1.key.amid, to: b1.key.amid });
    expect(state.statsView()).toMatchObject({ knocks: 2, knocks_allowed: 1, knocks_denied: 1 });
  });
});

describe('retire, allowlist', () => {
  it('retiring an agent retires its whole sub-tree and nothing else', () => {
    const { state, top, sub, now } = newState();
    const A = top();
    const a1 = sub(A);
    const a11 = sub(a1);
    const a2 = sub(A);
    const r = state.retire({ amid: a1.key.amid }, now);
    expect(r.ok && r.value.retired.sort()).toEqual([a1.key.amid, a11.key.amid].sort());
    expect(state.agent(a2.key.amid)?.status).toBe('active');
    expect(state.knock(knockBy(a11.key, A.key.amid), now)).toMatchObject({ allowed: false, code: 'caller-retired' });
    expect(state.knock(knockBy(A.key, a1.key.amid), now)).toMatchObject({ allowed: false, code: 'target-retired' });
    expect(state.retire({ amid: a1.key.amid }, now)).toMatchObject({ ok: false, refusal: { code: 'already-retired' } });
    const all = state.retire({ amid: A.key.amid }, now);
    expect(all.ok && all.value.retired.sort()).toEqual([A.key.amid, a2.key.amid].sort());
  });

  it('allow-pair joins top-level agents across organisations; revoke removes it', () => {
    const { state, top, sub, now } = newState();
    const A = top('acme');
    const X = top('partner');
    const a1 = sub(A);
    expect(state.knock(knockBy(A.key, X.key.amid), now).code).toBe('not-allowlisted');
    expect(state.allowPair({ a: X.key.amid, b: A.key.amid }, now)).toEqual({
      ok: true,
      value: { pair: [X.key.amid, A.key.amid], allowed: true },
    });
    expect(state.knock(knockBy(A.key, X.key.amid), now)).toMatchObject({ allowed: true, code: 'allowlisted-pair' });
    expect(state.knock(knockBy(X.key, A.key.amid), now)).toMatchObject({ allowed: true, code: 'allowlisted-pair' });
    expect(state.allowPair({ a: a1.key.amid, b: X.key.amid }, now)).toMatchObject({
      ok: false,
      refusal: { code: 'not-top-level' },
    });
    expect(state.allowPair({ a: A.key.amid, b: A.key.amid }, now)).toMatchObject({
      ok: false,
      refusal: { code: 'same-agent' },
    });
    expect(state.revokePair({ a: A.key.amid, b: X.key.amid })).toMatchObject({ ok: true, value: { allowed: false } });
    expect(state.knock(knockBy(A.key, X.key.amid), now).code).toBe('not-allowlisted');
  });
});

describe('governance events', () => {
  it('holds a bounded window but keeps exact counts', () => {
    const { state, top, now } = newState({ maxEventsHeld: 5 });
    const A = top();
    const stranger = generateIdentity();
    for (let i = 0; i < 12; i++) state.knock(knockBy(stranger, A.key.amid), now);
    const view = state.eventsView();
    expect(view).toMatchObject({
      total: 12,
      held: 5,
      archived: 7,
      by_code: { 'unknown-caller': 12 },
      by_kind: { 'knock-denied': 12 },
    });
    expect(view.events.map((e) => e.seq)).toEqual([8, 9, 10, 11, 12]);
    expect(state.eventsView({ limit: 2 }).events.map((e) => e.seq)).toEqual([11, 12]);
    expect(state.eventsView({ since: now + 1 }).events).toEqual([]);
  });
});

describe('cross-circle bridge', () => {
  const request = (key: ReturnType<typeof generateIdentity>, to: string, message: string, time = Date.now()) => {
    const statement = { from: key.amid, to, message, time, nonce: newNonce() };
    return { statement, signature: signStatement('bridge-request', statement, key.private_key) };
  };
  const decision = (
    key: ReturnType<typeof generateIdentity>,
    requestId: string,
    d: 'forward' | 'deliver' | 'decline',
    reason?: string,
  ) => {
    const statement = {
      request_id: requestId,
      by: key.amid,
      decision: d,
      ...(reason ? { reason } : {}),
      time: Date.now(),
      nonce: newNonce(),
    };
    return { statement, signature: signStatement('bridge-decision', statement, key.private_key) };
  };

  it('SubA1 -> ParentA -> ParentB -> SubB1, each hop recorded', () => {
    const { state, top, sub, now } = newState();
    const A = top();
    const B = top();
    const a1 = sub(A);
    const b1 = sub(B);
    const r = state.requestCrossCircle(request(a1.key, b1.key.amid, 'chart data please'), now);
    if (!r.ok) throw new Error(r.refusal.reason);
    expect(r.value).toMatchObject({
      status: 'awaiting-source-parent',
      source_parent: A.key.amid,
      target_parent: B.key.amid,
    });
    expect(state.bridgeFor(b1.key.amid)).toEqual([]); // nothing reaches the target yet
    // B cannot act before A
    expect(state.decideCrossCircle(decision(B.key, r.value.request_id, 'deliver'), now)).toMatchObject({
      ok: false,
      refusal: { code: 'not-your-turn' },
    });
    expect(state.decideCrossCircle(decision(A.key, r.value.request_id, 'forward'), now)).toMatchObject({
      ok: true,
      value: { status: 'awaiting-target-parent' },
    });
    expect(state.bridgeFor(b1.key.amid)).toEqual([]);
    const done = state.decideCrossCircle(decision(B.key, r.value.request_id, 'deliver', 'ok for analysis'), now);
    expect(done.ok && done.value.hops.map((h) => [h.step, h.by])).toEqual([
      ['requested', a1.key.amid],
      ['forwarded', A.key.amid],
      ['delivered', B.key.amid],
    ]);
    expect(state.bridgeFor(b1.key.amid)).toMatchObject([{ message: 'chart data please', status: 'delivered' }]);
    expect(state.decideCrossCircle(decision(B.key, r.value.request_id, 'deliver'), now)).toMatchObject({
      ok: false,
      refusal: { code: 'already-decided' },
    });
    expect(state.eventsView().by_code).toMatchObject({
      requested: 1,
      forwarded: 1,
      delivered: 1,
      'not-your-turn': 1,
      'already-decided': 1,
    });
  });

  it('a message queued by a sender retired since cannot cross; it can still be declined', () => {
    const { state, top, sub, now } = newState();
    const A = top();
    const B = top();
    const a1 = sub(A);
    const b1 = sub(B);
    const r = state.requestCrossCircle(request(a1.key, b1.key.amid, 'exfiltrate'), now);
    if (!r.ok) throw new Error(r.refusal.reason);
    state.decideCrossCircle(decision(A.key, r.value.request_id, 'forward'), now);
    state.retire({ amid: a1.key.amid }, now);
    expect(state.decideCrossCircle(decision(B.key, r.value.request_id, 'deliver'), now)).toMatchObject({
      ok: false,
      refusal: { code: 'sender-retired' },
    });
    expect(state.bridgeFor(b1.key.amid)).toEqual([]);
    expect(state.decideCrossCircle(decision(B.key, r.value.request_id, 'decline'), now)).toMatchObject({
      ok: true,
      value: { status: 'declined' },
    });
  });

  it('either parent can decline, and nobody else can decide', () => {
    const { state, top, sub, now } = newState();
    const A = top();
    const B = top();
    const a1 = sub(A);
    const b1 = sub(B);
    const r1 = state.requestCrossCircle(request(a1.key, b1.key.amid, 'one'), now);
    if (!r1.ok) throw new Error(r1.refusal.reason);
    expect(state.decideCrossCircle(decision(a1.key, r1.value.request_id, 'forward'), now)).toMatchObject({
      ok: false,
      refusal: { code: 'not-your-turn' },
    });
    expect(state.decideCrossCircle(decision(A.key, r1.value.request_id, 'decline', 'not needed'), now)).toMatchObject({
      ok: true,
      value: { status: 'declined' },
    });
    const r2 = state.requestCrossCircle(request(a1.key, b1.key.amid, 'two'), now);
    if (!r2.ok) throw new Error(r2.refusal.reason);
    state.decideCrossCircle(decision(A.key, r2.value.request_id, 'forward'), now);
    expect(state.decideCrossCircle(decision(B.key, r2.value.request_id, 'decline'), now)).toMatchObject({
      ok: true,
      value: { status: 'declined' },
    });
    expect(state.bridgeFor(b1.key.amid)).toEqual([]);
  });

  it('refuses requests within a circle, from top-level agents, and with bad signatures', () => {
    const { state, top, sub, now } = newState();
    const A = top();
    const B = top();
    const a1 = sub(A);
    const a2 = sub(A);
    const b1 = sub(B);
    expect(state.requestCrossCircle(request(a1.key, a2.key.amid, 'x'), now)).toMatchObject({
      ok: false,
      refusal: { code: 'same-circle' },
    });
    expect(state.requestCrossCircle(request(A.key, b1.key.amid, 'x'), now)).toMatchObject({
      ok: false,
      refusal: { code: 'not-sub-agent' },
    });
    const forged = request(a1.key, b1.key.amid, 'x');
    forged.statement.message = 'tampered';
    expect(state.requestCrossCircle(forged, now)).toMatchObject({ ok: false, refusal: { code: 'bad-signature' } });
  });

  it('a forward across organisations needs the parents to be an allowlisted pair', () => {
    const { state, top, sub, now } = newState();
    const A = top('acme');
    const X = top('partner');
    const a1 = sub(A);
    const x1 = sub(X);
    const r = state.requestCrossCircle(request(a1.key, x1.key.amid, 'hi'), now);
    if (!r.ok) throw new Error(r.refusal.reason);
    expect(state.decideCrossCircle(decision(A.key, r.value.request_id, 'forward'), now)).toMatchObject({
      ok: false,
      refusal: { code: 'not-allowlisted' },
    });
    state.allowPair({ a: A.key.amid, b: X.key.amid }, now);
    expect(state.decideCrossCircle(decision(A.key, r.value.request_id, 'forward'), now)).toMatchObject({ ok: true });
  });
});

describe('handover for continue-as-new', () => {
  it('round-trips everything: agents, allowlist, nonces, events, bridge, stats', () => {
    const { state, top, sub, now } = newState({ maxEventsHeld: 3 });
    const A = top('acme');
    const X = top('partner');
    const a1 = sub(A);
    const a11 = sub(a1);
    sub(X);
    state.allowPair({ a: A.key.amid, b: X.key.amid }, now);
    state.retire({ amid: a11.key.amid }, now);
    const used = knockBy(a1.key, A.key.amid, { time: now });
    state.knock(used, now);
    for (let i = 0; i < 5; i++) state.knock(knockBy(a1.key, X.key.amid, { time: now }), now);
    const statement = { from: a1.key.amid, to: X.key.amid, message: 'm', time: now, nonce: newNonce() };
    state.requestCrossCircle(
      { statement, signature: signStatement('bridge-request', statement, a1.key.private_key) },
      now,
    );

    // Through JSON, as a continue-as-new argument travels.
    const handover = JSON.parse(JSON.stringify(state.handover())) as ReturnType<typeof state.handover>;
    const restored = RegistryState.fromHandover(handover, state.config, { newCircleId: randomUUID });
    expect(restored.dump()).toEqual(state.dump());
    // The replay guard survives: the used nonce is still refused after the hand-over.
    expect(restored.knock(used, now + 1)).toMatchObject({ allowed: false, code: 'replay' });
  });

  it('10,000 agents fit comfortably in the continue-as-new payload and restore quickly', () => {
    // Built as a handover directly: spawning 8,000 signed sub-agents would only test the signer's speed.
    const key = () => randomBytes(32).toString('base64url');
    const tops = 2_000;
    const handover: RegistryHandover = {
      ...newState().state.handover(),
      circles: Array.from({ length: tops }, (_, i) => [randomUUID(), i]),
      orgs: ['default'],
      agents: [
        ...Array.from({ length: tops }, (_, i): RegistryHandover['agents'][number] => [
          key(),
          0,
          i,
          -1,
          0,
          0,
          1_700_000_000_000 + i,
          0,
        ]),
        ...Array.from({ length: 8_000 }, (_, i): RegistryHandover['agents'][number] => [
          key(),
          1,
          i % tops,
          i % tops,
          0,
          0,
          1_700_000_100_000 + i,
          0,
        ]),
      ],
    };
    const started = performance.now();
    const state = RegistryState.fromHandover(handover, {}, { newCircleId: randomUUID });
    const restoreMs = performance.now() - started;
    expect(state.agentCount()).toBe(10_000);
    expect(state.tree().circles).toHaveLength(tops);
    const again = state.handover();
    expect(again).toEqual(handover);
    expect(JSON.stringify(again).length).toBeLessThan(1_000_000);
    expect(restoreMs).toBeLessThan(5_000);
  });

  it('drops the oldest held events first when over budget, keeping counts exact', () => {
    const { state, top, now } = newState({ maxHandoverBytes: 4_000 });
    const A = top();
    const stranger = generateIdentity();
    for (let i = 0; i < 40; i++) state.knock(knockBy(stranger, A.key.amid), now);
    const handover = state.handover();
    expect(JSON.stringify(handover).length).toBeLessThanOrEqual(4_000);
    expect(handover.events.length).toBeLessThan(40);
    expect(handover.event_totals.total).toBe(40);
    const restored = RegistryState.fromHandover(handover, state.config, { newCircleId: randomUUID });
    expect(restored.eventsView()).toMatchObject({ total: 40, archived: 40 - handover.events.length });
  });
});

describe('operator-signed actions are single-use', () => {
  const operator = generateIdentity();
  const keys = [operator.public_key];
  function asOperator<T extends object>(action: OperatorAction, input: T, at: number) {
    const nonce = newNonce();
    const signature = signBytes(operatorSigningBytes(action, input, at, nonce), operator.private_key);
    return { ...input, operator: { public_key: operator.public_key, signed_at: at, nonce, signature } };
  }

  it('a captured signed allow-pair is refused the second time, even after the operator revoked the pair', () => {
    const { state, top, now } = newState();
    const A = top('acme');
    const X = top('partner');
    const captured = asOperator('allow-pair', { a: A.key.amid, b: X.key.amid }, now);
    expect(state.authorizeOperator('allow-pair', captured, keys, now)).toBeNull();
    expect(state.allowPair(captured, now)).toMatchObject({ ok: true });
    const revoke = asOperator('revoke-pair', { a: A.key.amid, b: X.key.amid }, now + 1000);
    expect(state.authorizeOperator('revoke-pair', revoke, keys, now + 1000)).toBeNull();
    state.revokePair(revoke);

    // The validator's read-only check and the handler's check both see the replay.
    expect(state.checkOperator('allow-pair', captured, keys, now + 2000)).toMatchObject({ code: 'replay' });
    const replay = state.authorizeOperator('allow-pair', captured, keys, now + 2000);
    expect(replay).toMatchObject({ code: 'replay' });
    expect(replay?.reason).toMatch(/allow-pair: operator nonce .* was already used/);
    expect(state.tree().allowlist).toEqual([]);
  });

  it('the read-only check changes nothing; a bad signature is refused without using its nonce', () => {
    const { state, top, now } = newState();
    const A = top('acme');
    const X = top('partner');
    const signed = asOperator('allow-pair', { a: A.key.amid, b: X.key.amid }, now);
    expect(state.checkOperator('allow-pair', signed, keys, now)).toBeNull();
    expect(state.checkOperator('allow-pair', signed, keys, now)).toBeNull();
    const forged = { ...signed, b: A.key.amid };
    expect(state.authorizeOperator('allow-pair', forged, keys, now)).toMatchObject({ code: 'not-operator' });
    expect(state.authorizeOperator('allow-pair', signed, keys, now)).toBeNull();
  });

  it('operator nonces survive continue-as-new and expire after twice the signature window', () => {
    const { state, top, now } = newState();
    const A = top('acme');
    const captured = asOperator('retire', { amid: A.key.amid }, now);
    expect(state.authorizeOperator('retire', captured, keys, now)).toBeNull();
    const handover = JSON.parse(JSON.stringify(state.handover())) as RegistryHandover;
    const restored = RegistryState.fromHandover(handover, state.config, { newCircleId: randomUUID });
    expect(restored.authorizeOperator('retire', captured, keys, now + 1)).toMatchObject({ code: 'replay' });
    expect(restored.handover()).toEqual(handover);
    // Past the window the signature is stale anyway; the nonce is then forgotten (bounded memory).
    const later = now + 2 * SIGNATURE_WINDOW_MS + 1;
    expect(restored.authorizeOperator('retire', captured, keys, later)).toMatchObject({ code: 'not-operator' });
    expect(restored.authorizeOperator('retire', asOperator('retire', { amid: A.key.amid }, later), keys, later)).toBe(
      null,
    );
    expect(restored.handover().operator_nonces).toHaveLength(1);
  });

  it('holds a bounded number of operator nonces: beyond it, operator actions wait', () => {
    const { state, top, now } = newState({ maxOperatorNoncesHeld: 2 });
    const A = top('acme');
    for (let i = 0; i < 2; i++)
      expect(state.authorizeOperator('retire', asOperator('retire', { amid: A.key.amid }, now), keys, now)).toBeNull();
    const third = state.authorizeOperator('retire', asOperator('retire', { amid: A.key.amid }, now), keys, now);
    expect(third).toMatchObject({ code: 'rate-limited' });
  });

  it('with no operator keys configured, nothing is signed and nothing is recorded', () => {
    const { state, top, now } = newState();
    const A = top('acme');
    expect(state.authorizeOperator('retire', { amid: A.key.amid }, [], now)).toBeNull();
    expect(state.handover().operator_nonces).toEqual([]);
  });
});

describe('ids that name Object prototype properties', () => {
  const hostile = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

  it('are no such agent for every lookup, and never touch Object.prototype', () => {
    const { state, top, sub, now } = newState();
    const A = top();
    sub(A);
    for (const id of hostile) {
      expect(state.agent(id), id).toBeNull();
      expect(state.discover(id), id).toBeNull();
      expect(state.bridgeFor(id), id).toEqual([]);
      expect(state.tree(id).circles, id).toEqual([]);
      expect(state.retire({ amid: id }, now), id).toMatchObject({ ok: false, refusal: { code: 'unknown-agent' } });
      expect(state.allowPair({ a: A.key.amid, b: id }, now), id).toMatchObject({
        ok: false,
        refusal: { code: 'unknown-agent' },
      });
      const knock = { statement: { from: id, to: A.key.amid, time: now, nonce: newNonce() }, signature: 'x' };
      expect(state.knock(knock, now), id).toMatchObject({ allowed: false, code: 'unknown-caller' });
    }
    expect(({} as Record<string, unknown>).status).toBeUndefined();
    expect(state.tree().agents).toEqual({ total: 2, active: 2, retired: 0 });
  });

  it('a bridge decision on request id __proto__ is an unknown request', () => {
    const { state, top, now } = newState();
    const A = top();
    const statement = {
      request_id: '__proto__',
      by: A.key.amid,
      decision: 'forward' as const,
      time: now,
      nonce: newNonce(),
    };
    const signed = { statement, signature: signStatement('bridge-decision', statement, A.key.private_key) };
    expect(state.decideCrossCircle(signed, now)).toMatchObject({ ok: false, refusal: { code: 'unknown-request' } });
  });

  it('a handover cannot revive prototype keys: such entries stay plain data', () => {
    const { state, top } = newState();
    top();
    const handover = JSON.parse(JSON.stringify(state.handover())) as RegistryHandover;
    const hostileRequest = JSON.parse(
      '{"request_id":"__proto__","from":"a","to":"b","source_parent":"a","target_parent":"b",' +
        '"message":"m","status":"declined","hops":[]}',
    ) as RegistryHandover['bridge'][number];
    handover.bridge.push(hostileRequest);
    const restored = RegistryState.fromHandover(handover, state.config, { newCircleId: randomUUID });
    expect(restored.dump().bridge).toEqual([hostileRequest]);
    expect(restored.handover()).toEqual(handover);
    expect(restored.agent('__proto__')).toBeNull();
    expect(restored.tree().agents.total).toBe(1);
  });
});

describe('organisation names that name Object prototype properties', () => {
  it('survive continue-as-new as plain names', () => {
    const { state, top } = newState();
    const A = top('constructor');
    const B = top('toString');
    const handover = JSON.parse(JSON.stringify(state.handover())) as RegistryHandover;
    expect(handover.orgs).toEqual(['constructor', 'toString']);
    const restored = RegistryState.fromHandover(handover, state.config, { newCircleId: randomUUID });
    expect(restored.agent(A.key.amid)?.org).toBe('constructor');
    expect(restored.agent(B.key.amid)?.org).toBe('toString');
  });
});
