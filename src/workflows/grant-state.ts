/**
 * One grant's state (docs/grants.md), pure: what the grant covers, its uses, its revocation, and why a use is
 * refused. The grant workflow (grant.ts) registers handlers and waits; every decision is a method here.
 */
import type {
  GrantDefinition,
  GrantRevocation,
  GrantState,
  GrantStatus,
  GrantUse,
  GrantUsed,
} from '../contracts/grant';
import type { CompliancePolicy } from '../contracts/policy';
import { refusal, type Refusal } from '../contracts/refusal';
import { grantCovers, refuseGrantByPolicy } from '../policy/grants';

export class GrantRecord {
  readonly uses: Array<{ workflow_id: string; at: string }> = [];
  revoked: (GrantRevocation & { at: string }) | null = null;
  /** Why the grant was not given (checked once, at its start), or null. */
  refusal: Refusal | null = null;

  constructor(
    readonly definition: GrantDefinition,
    private readonly policy: CompliancePolicy,
  ) {}

  get expiresAtMs(): number {
    return Date.parse(this.definition.expires_at);
  }

  state(nowMs: number): GrantState {
    if (this.refusal !== null) return 'refused';
    if (this.revoked) return 'revoked';
    if (this.uses.length >= this.definition.max_uses) return 'used_up';
    if (nowMs >= this.expiresAtMs) return 'expired';
    return 'live';
  }

  /** Why this use is refused, or null. The authority on a grant: the workers' index only finds candidates. */
  refuseUse(use: GrantUse, nowMs: number): Refusal | null {
    // The same proposal asking again (its activity retried after the first answer was lost) is answered again, even
    // when its use was the grant's last.
    if (this.uses.some((u) => u.workflow_id === use.workflow_id)) return null;
    const state = this.state(nowMs);
    if (state !== 'live')
      return refusal(
        `grant.${state.replace('_', '-')}`,
        `grant ${this.definition.grant_id} is ${state.replace('_', ' ')}`,
      );
    if (!grantCovers(this.definition, use))
      return refusal('grant.not-covered', `grant ${this.definition.grant_id} does not cover this action`);
    // The tier as the proposal's run sees it (the policy in force there): a policy that since moved the action type
    // out of the grantable tiers ends what the grant covers.
    const bounds = refuseGrantByPolicy(this.policy, this.definition, use.tier);
    if (bounds !== null) return refusal(bounds.code, `grant ${this.definition.grant_id}: ${bounds.reason}`);
    return null;
  }

  /** Records a use the validator accepted; returns what the proposal records. */
  use(use: GrantUse, at: string): GrantUsed {
    if (!this.uses.some((u) => u.workflow_id === use.workflow_id)) this.uses.push({ workflow_id: use.workflow_id, at });
    const d = this.definition;
    return {
      grant_id: d.grant_id,
      approver: d.approver,
      uses: this.uses.length,
      max_uses: d.max_uses,
      expires_at: d.expires_at,
    };
  }

  refuseRevocation(nowMs: number): Refusal | null {
    const state = this.state(nowMs);
    return state === 'live'
      ? null
      : refusal(
          `grant.${state.replace('_', '-')}`,
          `grant ${this.definition.grant_id} is already ${state.replace('_', ' ')}`,
        );
  }

  revoke(revocation: GrantRevocation, at: string): void {
    this.revoked = { ...revocation, at };
  }

  status(nowMs: number): GrantStatus {
    return {
      definition: this.definition,
      state: this.state(nowMs),
      refusal: this.refusal?.reason ?? null,
      uses: [...this.uses],
      revoked: this.revoked,
    };
  }
}
