/**
 * The KNOCK (see core.ts): a signed request of one agent to talk to another, decided by signature, freshness, replay
 * and the circle policy, in that order.
 */
import { decideKnock, pairKey } from '../policy';
import type { SignedKnock } from '../schemas';
import { verifyStatement } from '../statements';
import type { KnockResult } from '../types';
import { RegistryMembership } from './membership';

/** Decides KNOCKs; keeps the nonces of accepted signed messages. */
export class RegistryKnock extends RegistryMembership {
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
  protected useNonce(
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

  protected pruneNonces(now: number): void {
    this.nonces.prune(now);
  }

  protected isPairAllowed(a: string, b: string): boolean {
    return this.pairs.has(pairKey(a, b));
  }
}
