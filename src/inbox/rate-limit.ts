/**
 * Rate limits on the inbox's sign-in and enrolment endpoints (docs/inbox.md): a fixed window per key (a client
 * address, or an approver), in memory. Passkeys cannot be guessed, so the limits are about load and noise: a flood of
 * ceremonies from one address, or against one approver, gets a 429 with Retry-After instead of work. Pure apart from
 * the clock.
 */

/** At most `max` attempts per `windowMs`. */
export interface RateLimit {
  max: number;
  windowMs: number;
}

/** The inbox's defaults: a person signs in or enrols a few times a minute at most. */
export const DEFAULT_RATE_LIMITS: { perIp: RateLimit; perApprover: RateLimit } = {
  perIp: { max: 60, windowMs: 60_000 },
  perApprover: { max: 10, windowMs: 60_000 },
};

export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    readonly limit: RateLimit,
    private readonly now: () => number = Date.now,
    /** Keys kept at most (the oldest window goes first), so a flood of addresses cannot grow memory for ever. */
    private readonly maxKeys = 10_000,
  ) {}

  /**
   * Counts one attempt for `key`: null when it is within the limit, else the whole seconds until the window ends
   * (the Retry-After). A refused attempt is not counted.
   */
  hit(key: string): number | null {
    const now = this.now();
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.limit.windowMs) {
      this.windows.delete(key);
      if (this.windows.size >= this.maxKeys) {
        const oldest = this.windows.keys().next().value;
        if (oldest !== undefined) this.windows.delete(oldest);
      }
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    if (w.count >= this.limit.max) return Math.max(1, Math.ceil((w.start + this.limit.windowMs - now) / 1000));
    w.count += 1;
    return null;
  }
}
