/** Records and views the registry keeps and returns. Plain JSON throughout (they cross processes). */
import type { Role } from './schemas';

export type { Role };
export type AgentStatus = 'active' | 'retired';

/** One registered agent: the registry's source of truth for its key, role and circle. */
export interface AgentRecord {
  amid: string;
  public_key: string;
  role: Role;
  circle_id: string;
  /** Null for top-level agents. */
  parent_amid: string | null;
  status: AgentStatus;
  /** Organisation; sub-agents inherit their circle's. */
  org: string;
  /** Epoch milliseconds (workflow time). */
  registered_at: number;
  retired_at: number | null;
}

/** What `register` and `spawn` return (the CLI prints exactly these fields). */
export interface RegisteredAgent {
  amid: string;
  circle_id: string;
  role: Role;
  parent_amid?: string;
}

/** One entry of a discover answer. */
export interface DiscoveredAgent {
  amid: string;
  role: Role;
  circle_id: string;
  parent_amid: string | null;
}

/** Why a KNOCK was allowed or denied, as a stable code for scripts and dashboards. */
export type KnockCode =
  // allowed
  | 'parent'
  | 'same-circle'
  | 'own-circle'
  | 'top-level-peer'
  | 'allowlisted-pair'
  // denied
  | 'unknown-caller'
  | 'bad-signature'
  | 'stale'
  | 'replay'
  | 'rate-limited'
  | 'caller-retired'
  | 'unknown-target'
  | 'target-retired'
  | 'self'
  | 'cross-circle'
  | 'not-allowlisted';

/** The registry's answer to a KNOCK. */
export interface KnockResult {
  allowed: boolean;
  reason: string;
  code: KnockCode;
}

/** A denial or an audited bridge hop; kept, queryable and logged. */
export interface GovernanceEvent {
  seq: number;
  /** ISO 8601, workflow time. */
  at: string;
  kind: 'knock-denied' | 'spawn-refused' | 'bridge-refused' | 'bridge-hop';
  code: string;
  /** The acting agent (the caller as claimed when its signature failed). */
  from: string | null;
  to: string | null;
  reason: string;
  request_id?: string;
}

/** Exact counts over the registry's whole life, including events no longer held in full. */
export interface EventTotals {
  total: number;
  by_kind: Record<string, number>;
  by_code: Record<string, number>;
}

export type BridgeStatus = 'awaiting-source-parent' | 'awaiting-target-parent' | 'delivered' | 'declined';

export interface BridgeHop {
  step: 'requested' | 'forwarded' | 'delivered' | 'declined';
  by: string;
  at: string;
  reason?: string;
}

/** A cross-circle message on its way through both parents; each hop is recorded. */
export interface BridgeRequest {
  request_id: string;
  from: string;
  to: string;
  /** Top-level agent of the sender's circle: the first gate. */
  source_parent: string;
  /** Top-level agent of the target's circle: the second gate. */
  target_parent: string;
  message: string;
  status: BridgeStatus;
  hops: BridgeHop[];
}

/** Counters for dashboards and the bench. */
export interface RegistryStats {
  knocks: number;
  knocks_allowed: number;
  knocks_denied: number;
  registered: number;
  spawned: number;
  retired: number;
  /** How many times the registry continued as new. */
  generation: number;
}
