/**
 * The circle registry's state and every decision it makes, as a class with plain-JSON fields and
 * synchronous methods (the safe-message-handlers pattern): the workflow only registers handlers and
 * passes workflow time in, so everything here is unit-testable without a Temporal server and
 * deterministic inside one. Must stay free of Node built-ins: it runs in the workflow sandbox.
 *
 * {@link RegistryState} (state.ts) is one object built by `extends`, one concept per file: this core (the fields and
 * the freshness rule), events.ts, membership.ts (with operator authority), knock.ts, bridge.ts, codec.ts
 * (continue-as-new), and the reads in state.ts.
 */
import { registryConfig, type RegistryConfig } from '../config';
import { NonceLedger } from '../../identity/nonces';
import { staleness } from '../../identity/verify';
import type { PairInput, RegisterInput, RetireInput } from '../schemas';
import type { AgentRecord, BridgeRequest, EventTotals, GovernanceEvent, RegistryStats } from '../types';

export interface PairRecord {
  a: string;
  b: string;
  since: number;
}
export interface RegistryHooks {
  /** A fresh circle id (the workflow passes Temporal's deterministic `uuid4`). */
  newCircleId: () => string;
  /** Called once per governance event as it is recorded (the workflow logs it). */
  onEvent?: (event: GovernanceEvent) => void;
}

/** The Update inputs an operator signs. */
export type OperatorInput = RegisterInput | RetireInput | PairInput;
export const iso = (ms: number) => new Date(ms).toISOString();

export function finished(r: BridgeRequest): boolean {
  return r.status === 'delivered' || r.status === 'declined';
}

export function structuredCloneJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The registry's fields (plain JSON and Maps of it), its configuration and hooks. */
export class RegistryCore {
  readonly config: RegistryConfig;
  // Maps, not objects: ids come from outside, and `agents['__proto__']` would be Object.prototype.
  protected agents = new Map<string, AgentRecord>();
  /** circle id -> its top-level agent. */
  protected circles = new Map<string, string>();
  protected pairs = new Map<string, PairRecord>();
  /** Nonces of accepted KNOCKs and bridge messages, per caller AMID. */
  protected nonces = new NonceLedger();
  /** Nonces of accepted operator signatures, per operator key: each signed action is used once. */
  protected operatorNonces = new NonceLedger();
  protected events: GovernanceEvent[] = [];
  protected eventSeq = 0;
  protected totals: EventTotals = { total: 0, by_kind: {}, by_code: {} };
  protected bridge = new Map<string, BridgeRequest>();
  protected bridgeSeq = 0;
  protected stats: RegistryStats = {
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
    protected readonly hooks: RegistryHooks,
  ) {
    this.config = registryConfig(config);
  }

  /** The one freshness rule (identity's), worded for the statement at hand. */
  protected staleness(what: string, signedAt: number, now: number, windowMs: number): string | null {
    const why = staleness(signedAt, now, windowMs);
    return why === null ? null : `${what} ${why}`;
  }
}
