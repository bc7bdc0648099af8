/**
 * The circle registry's state and every decision it makes, as a class with plain-JSON fields and
 * synchronous methods (the safe-message-handlers pattern): the workflow only registers handlers and
 * passes workflow time in, so everything here is unit-testable without a Temporal server and
 * deterministic inside one. Must stay free of Node built-ins: it runs in the workflow sandbox.
 */
import { registryConfig, type RegistryConfig } from './config';
import { NonceLedger } from '../identity/nonces';
import { amidFromPublicKey, amidOfRegisteredKey, SIGNATURE_WINDOW_MS, staleness } from '../identity/verify';
import { refuseOperatorAction, type OperatorAction } from './operator';
import { verifyStatement, type StatementKind } from './statements';
import { discoverFor } from './discovery';
import { decideKnock, pairKey } from './policy';
import type {
  PairInput,
  RegisterInput,
  RetireInput,
  SignedBridgeDecision,
  SignedBridgeRequest,
  SignedKnock,
  SignedMembership,
} from './schemas';
import type {
  AgentRecord,
  BridgeRequest,
  DiscoveredAgent,
  EventTotals,
  GovernanceEvent,
  KnockResult,
  RegisteredAgent,
  RegistryStats,
  Role,
} from './types';

/** A refused operation: a stable code and a sentence for people. */
export interface Refusal {
  ok: false;
  code: string;
  reason: string;
}
export type Outcome<T> = { ok: true; value: T } | Refusal;

export interface PairRecord {
  a: string;
  b: string;
  since: number;
}

export interface RetireResult {
  retired: string[];
}

export interface PairResult {
  pair: [string, string];
  allowed: boolean;
}

export interface TreeNode {
  amid: string;
  role: Role;
  status: AgentRecord['status'];
  children: TreeNode[];
}

export interface CircleTree {
  circle_id: string;
  org: string;
  root: TreeNode;
}

/** The whole registry as a tree per circle, plus the allowlist. */
export interface RegistryTree {
  circles: CircleTree[];
  allowlist: Array<{ a: string; b: string }>;
  agents: { total: number; active: number; retired: number };
}

export interface EventsView {
  events: GovernanceEvent[];
  /** Every governance event ever recorded (exact). */
  total: number;
  /** How many are still held in full. */
  held: number;
  /** How many left the held window and survive only in the counts (and the logs). */
  archived: number;
  by_kind: Record<string, number>;
  by_code: Record<string, number>;
}

/** Everything the registry knows, in plain order-stable form: what "nothing lost" is checked against. */
export interface RegistryDump {
  agents: AgentRecord[];
  allowlist: PairRecord[];
  events: GovernanceEvent[];
  event_totals: EventTotals;
  bridge: BridgeRequest[];
  stats: RegistryStats;
}

/**
 * Compact plain-JSON form carried through continue-as-new. Agents are tuples and refer to each
 * other and to circles by index; the AMID is re-derived from the key. 10,000 agents fit in about
 * 0.8 MB, well inside the server's 2 MB payload limit.
 */
export interface RegistrySnapshot {
  v: 1;
  circles: Array<[circleId: string, ownerIndex: number]>;
  orgs: string[];
  /**
   * [public key, 0 top-level | 1 sub-agent, circle index, parent index or -1, 0 active | 1 retired,
   * org index, registered_at, retired_at or 0]
   */
  agents: Array<[string, 0 | 1, number, number, 0 | 1, number, number, number]>;
  pairs: Array<[number, number, number]>;
  /** [caller index, nonce, expiry] */
  nonces: Array<[number, string, number]>;
  /** Operator keys that signed the actions below. */
  operator_keys: string[];
  /** [operator key index, nonce, expiry]: operator signatures already used. */
  operator_nonces: Array<[number, string, number]>;
  events: GovernanceEvent[];
  event_seq: number;
  event_totals: EventTotals;
  bridge: BridgeRequest[];
  bridge_seq: number;
  stats: RegistryStats;
}

export interface RegistryHooks {
  /** A fresh circle id (the workflow passes Temporal's deterministic `uuid4`). */
  newCircleId: () => string;
  /** Called once per governance event as it is recorded (the workflow logs it). */
  onEvent?: (event: GovernanceEvent) => void;
}

/** The Update inputs an operator signs. */
export type OperatorInput = RegisterInput | RetireInput | PairInput;

const refuse = (code: string, reason: string): Refusal => ({ ok: false, code, reason });
const iso = (ms: number) => new Date(ms).toISOString();

export class RegistryState {
  readonly config: RegistryConfig;
  // Maps, not objects: ids come from outside, and `agents['__proto__']` would be Object.prototype.
  private agents = new Map<string, AgentRecord>();
  /** circle id -> its top-level agent. */
  private circles = new Map<string, string>();
  private pairs = new Map<string, PairRecord>();
  /** Nonces of accepted KNOCKs and bridge messages, per caller AMID. */
  private nonces = new NonceLedger();
  /** Nonces of accepted operator signatures, per operator key: each signed action is used once. */
  private operatorNonces = new NonceLedger();
  private events: GovernanceEvent[] = [];
  private eventSeq = 0;
  private totals: EventTotals = { total: 0, by_kind: {}, by_code: {} };
  private bridge = new Map<string, BridgeRequest>();
  private bridgeSeq = 0;
  private stats: RegistryStats = {
    knocks: 0,
    knocks_allowed: 0,
    knocks_denied: 0,
    registered: 0,
    spawned: 0,
    retired: 0,
    generation: 0,
  };

  constructor(
    config: Partial<RegistryConfig>,
    private readonly hooks: RegistryHooks,
  ) {
    this.config = registryConfig(config);
  }

  // ---------------------------------------------------------------- membership

  /** Operator action: a top-level agent joins with a new circle of its own. */
  registerTopLevel(input: RegisterInput, now: number): Outcome<RegisteredAgent> {
    const amid = amidFromPublicKey(input.public_key);
    const existing = this.agents.get(amid);
    if (existing)
      return refuse('already-registered', `agent ${amid} is already registered (${existing.role}, ${existing.status})`);
    const circleId = this.hooks.newCircleId();
    this.agents.set(amid, {
      amid,
      public_key: input.public_key,
      role: 'top-level',
      circle_id: circleId,
      parent_amid: null,
      status: 'active',
      org: input.org ?? this.config.defaultOrg,
      registered_at: now,
      retired_at: null,
    });
    this.circles.set(circleId, amid);
    this.stats.registered++;
    return { ok: true, value: { amid, circle_id: circleId, role: 'top-level' } };
  }

  /**
   * Adds a sub-agent on the strength of its parent's signed membership statement. Every refusal
   * is a governance event: a forged or mismatched statement is an attempt at circle-id spoofing.
   */
  spawnSubAgent(signed: SignedMembership, now: number): Outcome<RegisteredAgent> {
    const s = signed.statement;
    const refused = (code: string, reason: string) =>
      this.refuseWithEvent('spawn-refused', code, s.parent_amid, s.child_amid, reason, now);
    const parent = this.agents.get(s.parent_amid);
    if (!parent) return refused('unknown-parent', `parent ${s.parent_amid} is not a registered agent`);
    // The signature is checked against the key the registry holds, never one sent with the request.
    if (!verifyStatement('membership', s, signed.signature, parent.public_key)) {
      return refused(
        'bad-signature',
        `membership statement is not signed by the registered key of parent ${s.parent_amid}`,
      );
    }
    if (parent.status !== 'active')
      return refused('parent-retired', `parent ${s.parent_amid} is retired and cannot spawn`);
    if (s.circle_id !== parent.circle_id) {
      return refused(
        'circle-mismatch',
        `statement claims circle ${s.circle_id} but parent ${s.parent_amid} is in circle ${parent.circle_id}`,
      );
    }
    const derived = amidFromPublicKey(s.child_public_key);
    if (derived !== s.child_amid)
      return refused(
        'amid-mismatch',
        `child_amid ${s.child_amid} is not derived from child_public_key (expected ${derived})`,
      );
    const stale = this.staleness('membership statement', s.time, now, this.config.statementWindowMs);
    if (stale) return refused('stale', stale);
    const existing = this.agents.get(s.child_amid);
    if (existing)
      return refused(
        'already-registered',
        `agent ${s.child_amid} is already registered (${existing.role}, ${existing.status})`,
      );
    this.agents.set(s.child_amid, {
      amid: s.child_amid,
      public_key: s.child_public_key,
      role: 'sub-agent',
      circle_id: parent.circle_id,
      parent_amid: parent.amid,
      status: 'active',
      org: parent.org,
      registered_at: now,
      retired_at: null,
    });
    this.stats.spawned++;
    return {
      ok: true,
      value: { amid: s.child_amid, circle_id: parent.circle_id, parent_amid: parent.amid, role: 'sub-agent' },
    };
  }

  /** Operator action: retires an agent and its whole sub-tree (they can no longer knock or be knocked). */
  retire(input: RetireInput, now: number): Outcome<RetireResult> {
    const agent = this.agents.get(input.amid);
    if (!agent) return refuse('unknown-agent', `agent ${input.amid} is not registered`);
    if (agent.status === 'retired') return refuse('already-retired', `agent ${input.amid} is already retired`);
    // Descendants share the circle, so only the circle's members need looking at.
    const children = new Map<string, string[]>();
    for (const a of this.agents.values()) {
      if (a.circle_id !== agent.circle_id || !a.parent_amid) continue;
      const siblings = children.get(a.parent_amid);
      if (siblings) siblings.push(a.amid);
      else children.set(a.parent_amid, [a.amid]);
    }
    const retired: string[] = [];
    const stack = [agent.amid];
    while (stack.length > 0) {
      const amid = stack.pop() as string;
      const a = this.agents.get(amid) as AgentRecord;
      if (a.status === 'active') {
        a.status = 'retired';
        a.retired_at = now;
        retired.push(amid);
      }
      for (const child of children.get(amid) ?? []) stack.push(child);
    }
    this.stats.retired += retired.length;
    return { ok: true, value: { retired } };
  }

  /** Operator action: lets two top-level agents of different organisations knock each other. */
  allowPair(input: PairInput, now: number): Outcome<PairResult> {
    const bad = this.checkPair(input);
    if (bad) return bad;
    const key = pairKey(input.a, input.b);
    if (!this.pairs.has(key)) {
      const [a, b] = input.a < input.b ? [input.a, input.b] : [input.b, input.a];
      this.pairs.set(key, { a, b, since: now });
    }
    return { ok: true, value: { pair: [input.a, input.b], allowed: true } };
  }

  /** Operator action: removes a pair from the allowlist (a no-op when it was not there). */
  revokePair(input: PairInput): Outcome<PairResult> {
    const bad = this.checkPair(input, false);
    if (bad) return bad;
    this.pairs.delete(pairKey(input.a, input.b));
    return { ok: true, value: { pair: [input.a, input.b], allowed: false } };
  }

  private checkPair(input: PairInput, requireActive = true): Refusal | null {
    if (input.a === input.b) return refuse('same-agent', 'a pair needs two different agents');
    for (const amid of [input.a, input.b]) {
      const agent = this.agents.get(amid);
      if (!agent) return refuse('unknown-agent', `agent ${amid} is not registered`);
      if (agent.role !== 'top-level')
        return refuse('not-top-level', `agent ${amid} is a sub-agent; the allowlist joins top-level agents only`);
      if (requireActive && agent.status !== 'active') return refuse('retired', `agent ${amid} is retired`);
    }
    return null;
  }

  // ---------------------------------------------------------------- operator authority

  /**
   * Read-only check for an Update validator: why this operator action cannot be accepted now
   * (unsigned, not an operator key, stale, forged, or its signature already used), or null.
   * Validators must not change state, so the nonce is recorded by {@link authorizeOperator}.
   */
  checkOperator(
    action: OperatorAction,
    input: OperatorInput,
    operatorKeys: readonly string[],
    now: number,
  ): Refusal | null {
    const why = refuseOperatorAction(action, input, operatorKeys, now);
    if (why) return refuse('not-operator', why);
    const op = input.operator;
    if (operatorKeys.length === 0 || !op) return null;
    if (this.operatorNonces.isUsed(op.public_key, op.nonce, now))
      return refuse('replay', `${action}: operator nonce ${op.nonce} was already used: replayed operator action`);
    return null;
  }

  /**
   * The handler's check, right before the action is applied: as {@link checkOperator}, then records
   * the signature's nonce, so a captured signed action (an allow-pair, a retire...) works once. A
   * signature that fails the checks uses up nothing.
   */
  authorizeOperator(
    action: OperatorAction,
    input: OperatorInput,
    operatorKeys: readonly string[],
    now: number,
  ): Refusal | null {
    this.operatorNonces.prune(now);
    const bad = this.checkOperator(action, input, operatorKeys, now);
    if (bad) return bad;
    const op = input.operator;
    if (operatorKeys.length === 0 || !op) return null;
    if (this.operatorNonces.size >= this.config.maxOperatorNoncesHeld) {
      return refuse(
        'rate-limited',
        `${action}: more than ${this.config.maxOperatorNoncesHeld} operator actions ` +
          `within ${(2 * SIGNATURE_WINDOW_MS) / 1000}s; try again later`,
      );
    }
    // A replay passes the freshness check only until signed_at + window <= now + 2 x window.
    this.operatorNonces.record(op.public_key, op.nonce, now + 2 * SIGNATURE_WINDOW_MS);
    return null;
  }

  // ---------------------------------------------------------------- KNOCK

  /**
   * Decides a KNOCK. Order matters: the signature is checked before the nonce is looked at (so
   * nobody can burn another agent's nonces), and freshness and replay before the policy (so a
   * captured KNOCK is worthless). Every denial becomes a governance event.
   */
  knock(signed: SignedKnock, now: number): KnockResult {
    const s = signed.statement;
    this.stats.knocks++;
    this.pruneNonces(now);
    const caller = this.agents.get(s.from);
    const denied = (code: KnockResult['code'], reason: string): KnockResult => {
      this.stats.knocks_denied++;
      this.recordEvent('knock-denied', code, s.from, s.to, reason, now);
      return { allowed: false, code, reason };
    };
    if (!caller) return denied('unknown-caller', `caller ${s.from} is not a registered agent`);
    if (!verifyStatement('knock', s, signed.signature, caller.public_key)) {
      return denied('bad-signature', `knock is not signed by the registered key of ${s.from}`);
    }
    const stale = this.staleness('knock', s.time, now, this.config.knockWindowMs);
    if (stale) return denied('stale', stale);
    const nonceProblem = this.useNonce(s.from, s.nonce, now);
    if (nonceProblem) return denied(nonceProblem.code, nonceProblem.reason);
    const target = this.agents.get(s.to);
    const decision = decideKnock(caller, target, this.isPairAllowed(s.from, s.to), (c) => this.circles.get(c));
    if (!decision.allowed) return denied(decision.code, decision.reason);
    this.stats.knocks_allowed++;
    return { allowed: true, code: decision.code, reason: decision.reason };
  }

  /** The one freshness rule (identity's), worded for the statement at hand. */
  private staleness(what: string, signedAt: number, now: number, windowMs: number): string | null {
    const why = staleness(signedAt, now, windowMs);
    return why === null ? null : `${what} ${why}`;
  }

  private useNonce(
    amid: string,
    nonce: string,
    now: number,
  ): { code: 'replay' | 'rate-limited'; reason: string } | null {
    if (this.nonces.isUsed(amid, nonce, now))
      return { code: 'replay', reason: `nonce ${nonce} was already used by ${amid}: replayed message` };
    if (this.nonces.countFor(amid) >= this.config.maxKnocksPerCallerWindow) {
      return {
        code: 'rate-limited',
        reason:
          `${amid} sent more than ${this.config.maxKnocksPerCallerWindow} signed messages ` +
          `within ${(2 * this.config.knockWindowMs) / 1000}s`,
      };
    }
    // Any replay accepted by the freshness check arrives before signed time + window <= now + 2 x window.
    this.nonces.record(amid, nonce, now + 2 * this.config.knockWindowMs);
    return null;
  }

  private pruneNonces(now: number): void {
    this.nonces.prune(now);
  }

  private isPairAllowed(a: string, b: string): boolean {
    return this.pairs.has(pairKey(a, b));
  }

  // ---------------------------------------------------------------- cross-circle bridge

  /**
   * A sub-agent's `request_cross_circle(target, message)`: recorded and handed to the sender's
   * parent (the top-level agent of its circle). Nothing is delivered yet.
   */
  requestCrossCircle(signed: SignedBridgeRequest, now: number): Outcome<BridgeRequest> {
    const s = signed.statement;
    const refused = (code: string, reason: string) =>
      this.refuseWithEvent('bridge-refused', code, s.from, s.to, reason, now);
    this.pruneNonces(now);
    const sender = this.agents.get(s.from);
    const bad = this.checkSignedBy(sender, s.from, 'bridge-request', s, signed.signature, s.time, s.nonce, now);
    if (bad) return refused(bad.code, bad.reason);
    const from = sender as AgentRecord;
    if (from.status !== 'active') return refused('caller-retired', `caller ${s.from} is retired`);
    if (from.role !== 'sub-agent')
      return refused('not-sub-agent', `${s.from} is top-level: knock the other circle's parent directly`);
    const target = this.agents.get(s.to);
    if (!target) return refused('unknown-target', `target ${s.to} is not a registered agent`);
    if (target.status !== 'active') return refused('target-retired', `target ${s.to} is retired`);
    if (target.circle_id === from.circle_id)
      return refused('same-circle', `${s.to} is in the caller's own circle: knock it directly`);
    const sourceParent = this.circles.get(from.circle_id) as string;
    const targetParent = this.circles.get(target.circle_id) as string;
    if (!this.makeRoomForBridge())
      return refused('bridge-full', `too many cross-circle requests are pending (${this.config.maxBridgeHeld})`);
    const request: BridgeRequest = {
      request_id: `bridge-${++this.bridgeSeq}`,
      from: s.from,
      to: s.to,
      source_parent: sourceParent,
      target_parent: targetParent,
      message: s.message,
      status: 'awaiting-source-parent',
      hops: [{ step: 'requested', by: s.from, at: iso(now) }],
    };
    this.bridge.set(request.request_id, request);
    this.recordEvent(
      'bridge-hop',
      'requested',
      s.from,
      s.to,
      `cross-circle request from ${s.from} to ${s.to} awaits parent ${sourceParent}`,
      now,
      request.request_id,
    );
    return { ok: true, value: structuredCloneJson(request) };
  }

  /**
   * A parent's decision: the sender's parent forwards or declines; then the target's parent
   * delivers or declines. Only the parent whose turn it is may decide, with its own signature.
   */
  decideCrossCircle(signed: SignedBridgeDecision, now: number): Outcome<BridgeRequest> {
    const s = signed.statement;
    const request = this.bridge.get(s.request_id);
    const refused = (code: string, reason: string) =>
      this.refuseWithEvent('bridge-refused', code, s.by, request?.to ?? null, reason, now, s.request_id);
    this.pruneNonces(now);
    const decider = this.agents.get(s.by);
    const bad = this.checkSignedBy(decider, s.by, 'bridge-decision', s, signed.signature, s.time, s.nonce, now);
    if (bad) return refused(bad.code, bad.reason);
    if (!request) return refused('unknown-request', `no cross-circle request ${s.request_id} is held`);
    if ((decider as AgentRecord).status !== 'active') return refused('caller-retired', `${s.by} is retired`);
    // A retired sender's queued message dies with it: nothing a retired agent sent crosses later.
    const sender = this.agents.get(request.from);
    if (s.decision !== 'decline' && (!sender || sender.status !== 'active')) {
      return refused('sender-retired', `sender ${request.from} is retired`);
    }
    let step: 'forwarded' | 'delivered' | 'declined';
    if (request.status === 'awaiting-source-parent') {
      if (s.by !== request.source_parent)
        return refused(
          'not-your-turn',
          `${s.request_id} awaits the sender's parent ${request.source_parent}, not ${s.by}`,
        );
      if (s.decision === 'deliver')
        return refused('wrong-decision', `the sender's parent may forward or decline, not deliver`);
      if (s.decision === 'forward') {
        const caller = this.agents.get(request.source_parent) as AgentRecord;
        const peer = this.agents.get(request.target_parent);
        // Parent to parent is an ordinary top-level contact, under the same policy as a KNOCK.
        const policy = decideKnock(caller, peer, this.isPairAllowed(caller.amid, request.target_parent));
        if (!policy.allowed)
          return refused(policy.code, `cannot forward to ${request.target_parent}: ${policy.reason}`);
      }
      step = s.decision === 'forward' ? 'forwarded' : 'declined';
      request.status = step === 'forwarded' ? 'awaiting-target-parent' : 'declined';
    } else if (request.status === 'awaiting-target-parent') {
      if (s.by !== request.target_parent)
        return refused(
          'not-your-turn',
          `${s.request_id} awaits the target's parent ${request.target_parent}, not ${s.by}`,
        );
      if (s.decision === 'forward')
        return refused('wrong-decision', `the target's parent may deliver or decline, not forward`);
      if (s.decision === 'deliver') {
        const target = this.agents.get(request.to);
        if (!target || target.status !== 'active') return refused('target-retired', `target ${request.to} is retired`);
      }
      step = s.decision === 'deliver' ? 'delivered' : 'declined';
      request.status = step;
    } else {
      return refused('already-decided', `${s.request_id} is already ${request.status}`);
    }
    request.hops.push({ step, by: s.by, at: iso(now), ...(s.reason ? { reason: s.reason } : {}) });
    this.recordEvent(
      'bridge-hop',
      step,
      s.by,
      request.to,
      `${s.request_id} ${step} by ${s.by}${s.reason ? `: ${s.reason}` : ''}`,
      now,
      s.request_id,
    );
    return { ok: true, value: structuredCloneJson(request) };
  }

  /** Requests an agent sent, must decide, or has received (delivered ones carry the message). */
  bridgeFor(amid: string): BridgeRequest[] {
    return [...this.bridge.values()]
      .filter(
        (r) =>
          r.from === amid ||
          r.source_parent === amid ||
          r.target_parent === amid ||
          (r.to === amid && r.status === 'delivered'),
      )
      .map(structuredCloneJson);
  }

  private makeRoomForBridge(): boolean {
    if (this.bridge.size < this.config.maxBridgeHeld) return true;
    for (const [id, r] of this.bridge) {
      if (finished(r)) {
        this.bridge.delete(id);
        return true;
      }
    }
    return false;
  }

  private checkSignedBy(
    agent: AgentRecord | undefined,
    amid: string,
    kind: StatementKind,
    statement: object,
    signature: string,
    time: number,
    nonce: string,
    now: number,
  ): { code: string; reason: string } | null {
    if (!agent) return { code: 'unknown-caller', reason: `caller ${amid} is not a registered agent` };
    if (!verifyStatement(kind, statement, signature, agent.public_key))
      return { code: 'bad-signature', reason: `${kind} is not signed by the registered key of ${amid}` };
    const stale = this.staleness(kind, time, now, this.config.knockWindowMs);
    if (stale) return { code: 'stale', reason: stale };
    return this.useNonce(amid, nonce, now);
  }

  // ---------------------------------------------------------------- governance events

  private refuseWithEvent(
    kind: GovernanceEvent['kind'],
    code: string,
    from: string | null,
    to: string | null,
    reason: string,
    now: number,
    requestId?: string,
  ): Refusal {
    this.recordEvent(kind, code, from, to, reason, now, requestId);
    return refuse(code, reason);
  }

  private recordEvent(
    kind: GovernanceEvent['kind'],
    code: string,
    from: string | null,
    to: string | null,
    reason: string,
    now: number,
    requestId?: string,
  ): void {
    const event: GovernanceEvent = {
      seq: ++this.eventSeq,
      at: iso(now),
      kind,
      code,
      from,
      to,
      reason,
      ...(requestId ? { request_id: requestId } : {}),
    };
    this.events.push(event);
    if (this.events.length > this.config.maxEventsHeld)
      this.events.splice(0, this.events.length - this.config.maxEventsHeld);
    this.totals.total++;
    this.totals.by_kind[kind] = (this.totals.by_kind[kind] ?? 0) + 1;
    this.totals.by_code[code] = (this.totals.by_code[code] ?? 0) + 1;
    this.hooks.onEvent?.(event);
  }

  /** Held events at or after `since` (epoch ms), newest last, at most `limit`; counts are exact. */
  eventsView(filter: { since?: number; limit?: number } = {}): EventsView {
    let events =
      filter.since === undefined
        ? this.events
        : this.events.filter((e) => Date.parse(e.at) >= (filter.since as number));
    if (filter.limit !== undefined && events.length > filter.limit) events = events.slice(events.length - filter.limit);
    return {
      events: events.map((e) => ({ ...e })),
      total: this.totals.total,
      held: this.events.length,
      archived: this.totals.total - this.events.length,
      by_kind: { ...this.totals.by_kind },
      by_code: { ...this.totals.by_code },
    };
  }

  // ---------------------------------------------------------------- reads

  agent(amid: string): AgentRecord | null {
    const a = this.agents.get(amid);
    return a ? { ...a } : null;
  }

  /** The discover answer for `requester`, or null when the requester is not registered. */
  discover(requester: string): DiscoveredAgent[] | null {
    const me = this.agents.get(requester);
    if (!me) return null;
    return discoverFor(me, [...this.agents.values()], (a, b) => this.isPairAllowed(a, b));
  }

  /** One tree per circle (optionally just one circle), retired agents included with their status. */
  tree(circleId?: string): RegistryTree {
    const nodes = new Map<string, TreeNode>();
    let active = 0;
    let total = 0;
    for (const a of this.agents.values()) {
      total++;
      if (a.status === 'active') active++;
      if (circleId === undefined || a.circle_id === circleId)
        nodes.set(a.amid, { amid: a.amid, role: a.role, status: a.status, children: [] });
    }
    const circles: CircleTree[] = [];
    for (const a of this.agents.values()) {
      const node = nodes.get(a.amid);
      if (!node) continue;
      if (a.parent_amid) nodes.get(a.parent_amid)?.children.push(node);
      else circles.push({ circle_id: a.circle_id, org: a.org, root: node });
    }
    return {
      circles,
      allowlist: [...this.pairs.values()].map((p) => ({ a: p.a, b: p.b })),
      agents: { total, active, retired: total - active },
    };
  }

  statsView(): RegistryStats {
    return { ...this.stats };
  }

  agentCount(): number {
    return this.agents.size;
  }

  dump(): RegistryDump {
    return structuredCloneJson({
      agents: [...this.agents.values()],
      allowlist: [...this.pairs.values()],
      events: this.events,
      event_totals: this.totals,
      bridge: [...this.bridge.values()],
      stats: this.stats,
    });
  }

  // ---------------------------------------------------------------- continue-as-new

  /**
   * The state as a compact plain-JSON snapshot for continue-as-new. When it would exceed the
   * payload budget, the oldest held events and finished bridge requests are dropped first; their
   * counts stay exact in `event_totals`.
   */
  snapshot(): RegistrySnapshot {
    // Maps: organisation names come from operators, and `constructor` is a valid one.
    const agentIndex = new Map<string, number>();
    const agentList = [...this.agents.values()];
    agentList.forEach((a, i) => agentIndex.set(a.amid, i));
    const index = (amid: string) => agentIndex.get(amid) as number;
    const circleIds = [...this.circles.keys()];
    const circleIndex = new Map<string, number>();
    circleIds.forEach((c, i) => circleIndex.set(c, i));
    const orgs: string[] = [];
    const orgIndex = new Map<string, number>();
    const org = (name: string) => {
      let i = orgIndex.get(name);
      if (i === undefined) orgIndex.set(name, (i = orgs.push(name) - 1));
      return i;
    };
    const snap: RegistrySnapshot = {
      v: 1,
      circles: circleIds.map((c) => [c, index(this.circles.get(c) as string)]),
      orgs,
      agents: agentList.map((a) => [
        a.public_key,
        a.role === 'top-level' ? 0 : 1,
        circleIndex.get(a.circle_id) as number,
        a.parent_amid ? index(a.parent_amid) : -1,
        a.status === 'active' ? 0 : 1,
        org(a.org),
        a.registered_at,
        a.retired_at ?? 0,
      ]),
      pairs: [...this.pairs.values()].map((p) => [index(p.a), index(p.b), p.since]),
      nonces: this.nonces.entries().map(([amid, nonce, expiry]) => [index(amid), nonce, expiry]),
      ...this.operatorNonceSnapshot(),
      events: this.events.map((e) => ({ ...e })),
      event_seq: this.eventSeq,
      event_totals: structuredCloneJson(this.totals),
      bridge: [...this.bridge.values()].map(structuredCloneJson),
      bridge_seq: this.bridgeSeq,
      stats: { ...this.stats },
    };
    let size = JSON.stringify(snap).length;
    while (size > this.config.maxSnapshotBytes && (snap.events.length > 0 || snap.bridge.some(finished))) {
      const i = snap.bridge.findIndex(finished);
      if (i >= 0) snap.bridge.splice(i, 1);
      else snap.events.splice(0, Math.max(1, Math.ceil(snap.events.length / 4)));
      size = JSON.stringify(snap).length;
    }
    return snap;
  }

  private operatorNonceSnapshot(): Pick<RegistrySnapshot, 'operator_keys' | 'operator_nonces'> {
    const keys: string[] = [];
    const keyIndex = new Map<string, number>();
    const operator_nonces = this.operatorNonces.entries().map(([key, nonce, expiry]): [number, string, number] => {
      let i = keyIndex.get(key);
      if (i === undefined) keyIndex.set(key, (i = keys.push(key) - 1));
      return [i, nonce, expiry];
    });
    return { operator_keys: keys, operator_nonces };
  }

  /** Rebuilds the state a previous run handed over; the inverse of {@link snapshot}. */
  static fromSnapshot(
    snapshot: RegistrySnapshot | undefined,
    config: Partial<RegistryConfig>,
    hooks: RegistryHooks,
  ): RegistryState {
    const state = new RegistryState(config, hooks);
    if (!snapshot) return state;
    if (snapshot.v !== 1) throw new TypeError(`unknown registry snapshot version ${String(snapshot.v)}`);
    const amids = snapshot.agents.map(([publicKey]) => amidOfRegisteredKey(publicKey));
    snapshot.agents.forEach(([publicKey, role, circle, parent, status, org, registeredAt, retiredAt], i) => {
      const amid = amids[i] as string;
      state.agents.set(amid, {
        amid,
        public_key: publicKey,
        role: role === 0 ? 'top-level' : 'sub-agent',
        circle_id: (snapshot.circles[circle] as [string, number])[0],
        parent_amid: parent >= 0 ? (amids[parent] as string) : null,
        status: status === 0 ? 'active' : 'retired',
        org: snapshot.orgs[org] as string,
        registered_at: registeredAt,
        retired_at: retiredAt === 0 ? null : retiredAt,
      });
    });
    for (const [circleId, owner] of snapshot.circles) state.circles.set(circleId, amids[owner] as string);
    for (const [a, b, since] of snapshot.pairs) {
      const pa = amids[a] as string;
      const pb = amids[b] as string;
      state.pairs.set(pairKey(pa, pb), { a: pa, b: pb, since });
    }
    for (const [caller, nonce, expiry] of snapshot.nonces) state.nonces.record(amids[caller] as string, nonce, expiry);
    for (const [key, nonce, expiry] of snapshot.operator_nonces)
      state.operatorNonces.record(snapshot.operator_keys[key] as string, nonce, expiry);
    state.events = snapshot.events.map((e) => ({ ...e }));
    state.eventSeq = snapshot.event_seq;
    state.totals = structuredCloneJson(snapshot.event_totals);
    for (const r of snapshot.bridge) state.bridge.set(r.request_id, structuredCloneJson(r));
    state.bridgeSeq = snapshot.bridge_seq;
    state.stats = { ...snapshot.stats };
    return state;
  }

  /** Marks the hand-over to a new run (counted in stats). */
  nextGeneration(): void {
    this.stats.generation++;
  }
}

function finished(r: BridgeRequest): boolean {
  return r.status === 'delivered' || r.status === 'declined';
}

function structuredCloneJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
