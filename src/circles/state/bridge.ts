/**
 * The cross-circle bridge (see core.ts): a sub-agent's message to another circle goes through its parent, then the
 * target's parent; each hop is a signed decision and a governance event.
 */
import { decideKnock } from '../policy';
import type { SignedBridgeDecision, SignedBridgeRequest } from '../schemas';
import { verifyStatement, type StatementKind } from '../statements';
import type { AgentRecord, BridgeRequest } from '../types';
import { refusal, type Checked, type Refusal } from '../../contracts/refusal';
import { finished, iso, structuredCloneJson } from './core';
import { RegistryKnock } from './knock';

/** Cross-circle requests and their parents' decisions. */
export class RegistryBridge extends RegistryKnock {
  /**
   * A sub-agent's `request_cross_circle(target, message)`: recorded and handed to the sender's
   * parent (the top-level agent of its circle). Nothing is delivered yet.
   */
  requestCrossCircle(signed: SignedBridgeRequest, now: number): Checked<BridgeRequest> {
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
  decideCrossCircle(signed: SignedBridgeDecision, now: number): Checked<BridgeRequest> {
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

  protected makeRoomForBridge(): boolean {
    if (this.bridge.size < this.config.maxBridgeHeld) return true;
    for (const [id, r] of this.bridge) {
      if (finished(r)) {
        this.bridge.delete(id);
        return true;
      }
    }
    return false;
  }

  protected checkSignedBy(
    agent: AgentRecord | undefined,
    amid: string,
    kind: StatementKind,
    statement: object,
    signature: string,
    time: number,
    nonce: string,
    now: number,
  ): Refusal | null {
    if (!agent) return refusal('unknown-caller', `caller ${amid} is not a registered agent`);
    if (!verifyStatement(kind, statement, signature, agent.public_key))
      return refusal('bad-signature', `${kind} is not signed by the registered key of ${amid}`);
    const stale = this.staleness(kind, time, now, this.config.knockWindowMs);
    if (stale) return refusal('stale', stale);
    return this.useNonce(amid, nonce, now);
  }
}
