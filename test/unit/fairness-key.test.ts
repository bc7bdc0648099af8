/** The fairness key a proposal is started with (src/client/proposals/fairness.ts): Temporal's 64-byte bound. */
import { describe, expect, it } from 'vitest';
import { fairnessKeyFor, FAIRNESS_KEY_MAX_BYTES } from '../../src/client/proposals';
import { AgentIdSchema } from '../../src/contracts/proposal';

describe('fairnessKeyFor', () => {
  it('is the agent id itself when it fits', () => {
    expect(fairnessKeyFor('@engineering')).toBe('@engineering');
    const exact = `@${'a'.repeat(63)}`;
    expect(fairnessKeyFor(exact)).toBe(exact);
  });

  it('hashes a longer id to 64 bytes, the same every time, distinct per id and from every short id', () => {
    const long = `@${'a'.repeat(100)}`;
    const key = fairnessKeyFor(long);
    expect(Buffer.byteLength(key)).toBe(FAIRNESS_KEY_MAX_BYTES);
    expect(key).toMatch(/^@a{30}#[0-9a-f]{32}$/);
    expect(fairnessKeyFor(long)).toBe(key);
    expect(fairnessKeyFor(`${long}b`)).not.toBe(key);
    // No agent id contains '#', so no short id is ever a hashed key.
    expect(AgentIdSchema.safeParse(key).success).toBe(false);
    expect(AgentIdSchema.safeParse(`@${'a'.repeat(127)}`).success).toBe(true);
    expect(Buffer.byteLength(fairnessKeyFor(`@${'a'.repeat(127)}`))).toBe(64);
  });

  it('keeps within 64 bytes for text that is not ASCII', () => {
    const key = fairnessKeyFor('é'.repeat(40));
    expect(Buffer.byteLength(key)).toBeLessThanOrEqual(FAIRNESS_KEY_MAX_BYTES);
    expect(key).toMatch(/^#[0-9a-f]{32}$/);
  });
});
