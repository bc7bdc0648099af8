/**
 * The capability layer of the proposal state (see core.ts, seed 000 §8): the single-use token the action about to be
 * performed gets, who redeemed it, and its expiry.
 */
import type {
  CapabilityRecord,
  CapabilityRedemption,
  CapabilityRequest,
  IssuedCapability,
  RedeemCapabilityInput,
  SettleLease,
} from '../../contracts/capability';
import { refusal, type Refusal } from '../../contracts/refusal';
import { capabilityBinding, capabilityRequestFor, EXECUTOR_REDEEMER, policyDigest } from '../schemas';
import { CallerWindowState } from './caller-window';

/** Moved to contracts (the MCP proxy computes the same binding): re-exported for existing imports. */
export { capabilityBinding };

/** The capability token of the approved action. */
export class CapabilityState extends CallerWindowState {
  protected _capability: CapabilityRecord | null = null;

  get capability(): CapabilityRecord | null {
    return this._capability;
  }

  /** What the issuing activity signs: this proposal's agent, audience and action, under this policy. */
  capabilityRequest(ttlMs: number, policySha256: string = policyDigest(this.policy)): CapabilityRequest {
    return capabilityRequestFor(this.workflowId, this.actionProposal, policySha256, ttlMs);
  }

  /** The token the workflow worker issued; `executedHere` when agent-judge's executor will redeem it. */
  recordCapability(issued: IssuedCapability, executedHere: boolean): void {
    this._capability = {
      token: issued.token,
      token_id: issued.claims.jti,
      kid: issued.kid,
      audience: issued.claims.aud,
      action_sha256: issued.claims.action_sha256,
      issued_at: issued.claims.iat,
      expires_at: issued.claims.exp,
      executed_by_agent_judge: executedHere,
      redemption: null,
      expired_at: null,
    };
  }

  /**
   * Agent-judge's own executor redeems the token as the workflow hands it over: recorded here, synchronously with
   * the token's issue and in the workflow task that schedules the execute activity, so no Update redeemed it before
   * and every later one is refused (`already redeemed ... by agent-judge-executor`). The executor then verifies the
   * token and that Temporal says this run scheduled its activity (src/activities/execute.ts): one Update, and the
   * workflow task that would answer it, fewer per executed action.
   */
  redeemForExecutor(now: string): CapabilityRedemption {
    const c = this._capability;
    if (!c || !c.executed_by_agent_judge || c.redemption) {
      throw new Error('redeemForExecutor: the token is not an unredeemed one for agent-judge to execute');
    }
    c.redemption = {
      token_id: c.token_id,
      audience: c.audience,
      redeemer: EXECUTOR_REDEEMER,
      nonce: `executor:${this.workflowId}:${c.token_id}`,
      redeemed_at: now,
    };
    return c.redemption;
  }

  /**
   * Why a redemption cannot be accepted, or null. The token must be exactly the one this run issued
   * (a token of another run or workflow never matches), for the audience the performer is and the
   * action it is about to perform, unexpired (workflow time) and unredeemed.
   */
  refuseRedemption(r: RedeemCapabilityInput, nowMs: number): Refusal | null {
    const c = this._capability;
    if (!c)
      return refusal(
        'wrong-stage',
        `proposal ${this._proposal.proposal_id} has no capability token (stage: ${this._stage})`,
      );
    if (r.token !== c.token) return refusal('workflow', 'this token was not issued for this proposal run');
    if (c.redemption)
      return refusal(
        'redeemed',
        `the token ${c.token_id} was already redeemed at ${c.redemption.redeemed_at} by ${c.redemption.redeemer}`,
      );
    if (c.expired_at !== null || Date.parse(c.expires_at) <= nowMs)
      return refusal('expired', `the token expired at ${c.expires_at}`);
    if (r.audience !== c.audience) return refusal('audience', `the token is for ${c.audience}, not ${r.audience}`);
    if (r.action_sha256 !== c.action_sha256)
      return refusal(
        'action',
        `the action about to be performed is not the approved one (sha256 ${r.action_sha256.slice(0, 16)}…)`,
      );
    if (r.lease === 'forwarding') return this.refuseCallerOutcome({ outcome: 'forwarding' });
    return null;
  }

  /** Records the accepted redemption (the validator has checked it). */
  redeemCapability(r: RedeemCapabilityInput, now: string): CapabilityRedemption {
    const c = this._capability!;
    const redemption = {
      token_id: c.token_id,
      audience: r.audience,
      redeemer: r.redeemer,
      nonce: r.nonce,
      redeemed_at: now,
    };
    c.redemption = redemption;
    // Redeeming for the caller's one performance leases it too (the validator checked it can be leased).
    if (r.lease === 'forwarding') this.recordCallerOutcome({ outcome: 'forwarding' }, now);
    return redemption;
  }

  /**
   * The run has settled: if it settled approved for its caller to perform, before `lease_before`, redeem the token for
   * the lease's audience and action and lease the one performance, exactly as an accepted `redeemCapability` with
   * `lease: 'forwarding'` does (the same checks refuse it: another action, audience, expired, already leased).
   * Returns whether the lease was taken; when not, nothing changed.
   */
  leaseOnSettle(lease: SettleLease, nowMs: number, now: string): boolean {
    const c = this._capability;
    if (!c || this._caller === null || nowMs > Date.parse(lease.lease_before)) return false;
    const redemption: RedeemCapabilityInput = {
      token: c.token,
      audience: lease.audience,
      action_sha256: lease.action_sha256,
      redeemer: lease.redeemer,
      nonce: lease.nonce,
      lease: 'forwarding',
    };
    if (this.refuseRedemption(redemption, nowMs) !== null) return false;
    this.redeemCapability(redemption, now);
    return true;
  }

  /** True while a caller-performed action's token waits to be redeemed (the run stays open for it). */
  awaitsRedemption(): boolean {
    const c = this._capability;
    return c !== null && !c.executed_by_agent_judge && c.redemption === null && c.expired_at === null;
  }

  /** How long the run keeps waiting for the redemption: until the token expires (at least 1 ms). */
  redemptionWaitMs(nowMs: number): number {
    return Math.max(1, Date.parse(this._capability?.expires_at ?? '') - nowMs || 1);
  }

  /** Nobody redeemed the token before it expired. */
  expireCapability(now: string): void {
    if (this._capability && !this._capability.redemption) this._capability.expired_at = now;
  }
}
