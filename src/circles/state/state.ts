/**
 * The circle registry's state (see core.ts for how it is built): {@link RegistryState} adds the reads (an agent,
 * discover, the trees, stats, the whole dump) and rebuilding from a handover.
 */
import type { RegistryConfig } from '../config';
import { discoverFor } from '../discovery';
import type { AgentRecord, DiscoveredAgent, RegistryStats, Role } from '../types';
import { structuredCloneJson, type RegistryHooks } from './core';
import { RegistryCodec, type RegistryHandover } from './codec';
import type { PairRecord } from './core';
import type { BridgeRequest, EventTotals, GovernanceEvent } from '../types';

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
/** Everything the registry knows, in plain order-stable form: what "nothing lost" is checked against. */
export interface RegistryDump {
  agents: AgentRecord[];
  allowlist: PairRecord[];
  events: GovernanceEvent[];
  event_totals: EventTotals;
  bridge: BridgeRequest[];
  stats: RegistryStats;
}
export class RegistryState extends RegistryCodec {
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

  /** Rebuilds the state a previous run handed over; the inverse of {@link handover}. */
  static fromHandover(
    handover: RegistryHandover | undefined,
    config: Partial<RegistryConfig>,
    hooks: RegistryHooks,
  ): RegistryState {
    const state = new RegistryState(config, hooks);
    if (!handover) return state;
    state.restore(handover);
    return state;
  }
}
