/**
 * The circle registry's continue-as-new codec (see core.ts): the state as a compact plain-JSON handover, within the
 * payload budget, and back.
 */
import { amidOfRegisteredKey } from '../../identity/verify';
import { pairKey } from '../policy';
import type { GovernanceEvent, BridgeRequest, EventTotals, RegistryStats } from '../types';
import { finished, structuredCloneJson } from './core';
import { RegistryBridge } from './bridge';

/**
 * Compact plain-JSON form carried through continue-as-new. Agents are tuples and refer to each
 * other and to circles by index; the AMID is re-derived from the key. 10,000 agents fit in about
 * 0.8 MB, well inside the server's 2 MB payload limit.
 */
export interface RegistryHandover {
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
/** The registry handed from one run to the next. */
export class RegistryCodec extends RegistryBridge {
  /**
   * The state as a compact plain-JSON handover for continue-as-new. When it would exceed the
   * payload budget, the oldest held events and finished bridge requests are dropped first; their
   * counts stay exact in `event_totals`.
   */
  handover(): RegistryHandover {
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
    const handover: RegistryHandover = {
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
      ...this.operatorNonceHandover(),
      events: this.events.map((e) => ({ ...e })),
      event_seq: this.eventSeq,
      event_totals: structuredCloneJson(this.totals),
      bridge: [...this.bridge.values()].map(structuredCloneJson),
      bridge_seq: this.bridgeSeq,
      stats: { ...this.stats },
    };
    let size = JSON.stringify(handover).length;
    while (size > this.config.maxHandoverBytes && (handover.events.length > 0 || handover.bridge.some(finished))) {
      const i = handover.bridge.findIndex(finished);
      if (i >= 0) handover.bridge.splice(i, 1);
      else handover.events.splice(0, Math.max(1, Math.ceil(handover.events.length / 4)));
      size = JSON.stringify(handover).length;
    }
    return handover;
  }

  protected operatorNonceHandover(): Pick<RegistryHandover, 'operator_keys' | 'operator_nonces'> {
    const keys: string[] = [];
    const keyIndex = new Map<string, number>();
    const operator_nonces = this.operatorNonces.entries().map(([key, nonce, expiry]): [number, string, number] => {
      let i = keyIndex.get(key);
      if (i === undefined) keyIndex.set(key, (i = keys.push(key) - 1));
      return [i, nonce, expiry];
    });
    return { operator_keys: keys, operator_nonces };
  }

  /** Fills a new state from the handover a previous run handed over; the inverse of {@link handover}. */
  protected restore(handover: RegistryHandover): void {
    if (handover.v !== 1) throw new TypeError(`unknown registry handover version ${String(handover.v)}`);
    const amids = handover.agents.map(([publicKey]) => amidOfRegisteredKey(publicKey));
    handover.agents.forEach(([publicKey, role, circle, parent, status, org, registeredAt, retiredAt], i) => {
      const amid = amids[i] as string;
      this.agents.set(amid, {
        amid,
        public_key: publicKey,
        role: role === 0 ? 'top-level' : 'sub-agent',
        circle_id: (handover.circles[circle] as [string, number])[0],
        parent_amid: parent >= 0 ? (amids[parent] as string) : null,
        status: status === 0 ? 'active' : 'retired',
        org: handover.orgs[org] as string,
        registered_at: registeredAt,
        retired_at: retiredAt === 0 ? null : retiredAt,
      });
    });
    for (const [circleId, owner] of handover.circles) this.circles.set(circleId, amids[owner] as string);
    for (const [a, b, since] of handover.pairs) {
      const pa = amids[a] as string;
      const pb = amids[b] as string;
      this.pairs.set(pairKey(pa, pb), { a: pa, b: pb, since });
    }
    for (const [caller, nonce, expiry] of handover.nonces) this.nonces.record(amids[caller] as string, nonce, expiry);
    for (const [key, nonce, expiry] of handover.operator_nonces)
      this.operatorNonces.record(handover.operator_keys[key] as string, nonce, expiry);
    this.events = handover.events.map((e) => ({ ...e }));
    this.eventSeq = handover.event_seq;
    this.totals = structuredCloneJson(handover.event_totals);
    for (const r of handover.bridge) this.bridge.set(r.request_id, structuredCloneJson(r));
    this.bridgeSeq = handover.bridge_seq;
    this.stats = { ...handover.stats };
  }

  /** Marks the hand-over to a new run (counted in stats). */
  nextGeneration(): void {
    this.stats.generation++;
  }
}
