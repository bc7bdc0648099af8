/**
 * Circle membership in the registry (see core.ts): top-level agents registered by operators, sub-agents spawned on
 * their parent's signed statement, retirement of a sub-tree, the allowlist of pairs, and the operator's authority
 * over these actions (each signed action used once).
 */
import { amidFromPublicKey, SIGNATURE_WINDOW_MS } from '../../identity/verify';
import { refuseOperatorAction, type OperatorAction } from '../operator';
import { pairKey } from '../policy';
import type { PairInput, RegisterInput, RetireInput, SignedMembership } from '../schemas';
import { verifyStatement } from '../statements';
import type { AgentRecord, RegisteredAgent } from '../types';
import { refusal, refused, type Checked, type Refusal } from '../../contracts/refusal';
import type { OperatorInput } from './core';
import { RegistryEvents } from './events';

export interface RetireResult {
  retired: string[];
}

export interface PairResult {
  pair: [string, string];
  allowed: boolean;
}
/** Who is in which circle, and what operators may change about it. */
export class RegistryMembership extends RegistryEvents {
  // ---------------------------------------------------------------- membership

  /** Operator action: a top-level agent joins with a new circle of its own. */
  registerTopLevel(input: RegisterInput, now: number): Checked<RegisteredAgent> {
    const amid = amidFromPublicKey(input.public_key);
    const existing = this.agents.get(amid);
    if (existing)
      return refused(
        'already-registered',
        `agent ${amid} is already registered (${existing.role}, ${existing.status})`,
      );
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
  spawnSubAgent(signed: SignedMembership, now: number): Checked<RegisteredAgent> {
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
  retire(input: RetireInput, now: number): Checked<RetireResult> {
    const agent = this.agents.get(input.amid);
    if (!agent) return refused('unknown-agent', `agent ${input.amid} is not registered`);
    if (agent.status === 'retired') return refused('already-retired', `agent ${input.amid} is already retired`);
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
  allowPair(input: PairInput, now: number): Checked<PairResult> {
    const bad = this.checkPair(input);
    if (bad) return refused(bad);
    const key = pairKey(input.a, input.b);
    if (!this.pairs.has(key)) {
      const [a, b] = input.a < input.b ? [input.a, input.b] : [input.b, input.a];
      this.pairs.set(key, { a, b, since: now });
    }
    return { ok: true, value: { pair: [input.a, input.b], allowed: true } };
  }

  /** Operator action: removes a pair from the allowlist (a no-op when it was not there). */
  revokePair(input: PairInput): Checked<PairResult> {
    const bad = this.checkPair(input, false);
    if (bad) return refused(bad);
    this.pairs.delete(pairKey(input.a, input.b));
    return { ok: true, value: { pair: [input.a, input.b], allowed: false } };
  }

  protected checkPair(input: PairInput, requireActive = true): Refusal | null {
    if (input.a === input.b) return refusal('same-agent', 'a pair needs two different agents');
    for (const amid of [input.a, input.b]) {
      const agent = this.agents.get(amid);
      if (!agent) return refusal('unknown-agent', `agent ${amid} is not registered`);
      if (agent.role !== 'top-level')
        return refusal('not-top-level', `agent ${amid} is a sub-agent; the allowlist joins top-level agents only`);
      if (requireActive && agent.status !== 'active') return refusal('retired', `agent ${amid} is retired`);
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
    if (why) return why;
    const op = input.operator;
    if (operatorKeys.length === 0 || !op) return null;
    if (this.operatorNonces.isUsed(op.public_key, op.nonce, now))
      return refusal('replay', `${action}: operator nonce ${op.nonce} was already used: replayed operator action`);
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
      return refusal(
        'rate-limited',
        `${action}: more than ${this.config.maxOperatorNoncesHeld} operator actions ` +
          `within ${(2 * SIGNATURE_WINDOW_MS) / 1000}s; try again later`,
      );
    }
    // A replay passes the freshness check only until signed_at + window <= now + 2 x window.
    this.operatorNonces.record(op.public_key, op.nonce, now + 2 * SIGNATURE_WINDOW_MS);
    return null;
  }
}
