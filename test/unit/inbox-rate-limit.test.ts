/**
 * The inbox's rate limiter (src/inbox/rate-limit.ts): a fixed window per key, the seconds to wait past the limit,
 * refused attempts not counted, keys independent, memory bounded.
 */
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/inbox/rate-limit';

describe('the inbox rate limiter', () => {
  it('allows max attempts per window, then says how long to wait; a new window starts afresh', () => {
    let now = 1_000_000;
    const limiter = new RateLimiter({ max: 3, windowMs: 60_000 }, () => now);
    expect([limiter.hit('ip:a'), limiter.hit('ip:a'), limiter.hit('ip:a')]).toEqual([null, null, null]);
    expect(limiter.hit('ip:a')).toBe(60);
    now += 45_500;
    expect(limiter.hit('ip:a')).toBe(15);
    // Another key has its own window.
    expect(limiter.hit('ip:b')).toBeNull();
    now += 14_500;
    expect(limiter.hit('ip:a')).toBeNull();
    expect(limiter.hit('ip:a')).toBeNull();
  });

  it('never says to wait less than a second, and forgets the oldest key when full', () => {
    let now = 0;
    const limiter = new RateLimiter({ max: 1, windowMs: 1_000 }, () => now, 2);
    expect(limiter.hit('a')).toBeNull();
    now = 999;
    expect(limiter.hit('a')).toBe(1);
    expect(limiter.hit('b')).toBeNull();
    expect(limiter.hit('c')).toBeNull(); // 'a' goes
    expect(limiter.hit('a')).toBeNull();
  });
});
