/**
 * Action types the risk matrix does not list: the one reason every surface shows (the dispute, the CLI's outcome, the
 * inbox), with the closest listed types for a typo.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CompliancePolicy } from '../../src/contracts/policy';
import { closestActionTypes, editDistance, unlistedActionTypeReason } from '../../src/policy/action-types';
import { DEFAULT_POLICY_PATH, loadPolicy } from '../../src/policy/load';
import { renderOutcome } from '../../src/cli/outcome-text';

let policy: CompliancePolicy;
let listed: string[];
beforeAll(async () => {
  policy = await loadPolicy({ path: DEFAULT_POLICY_PATH, baseDir: mkdtempSync(join(tmpdir(), 'aj-types-')), env: {} });
  listed = policy.spec.riskMatrix.map((e) => e.actionType);
});

/** Every one-edit slip of `word`: a letter dropped, doubled, replaced by its neighbour, or two letters swapped. */
function slips(word: string): string[] {
  const out = new Set<string>();
  for (let i = 0; i < word.length; i++) {
    out.add(word.slice(0, i) + word.slice(i + 1));
    out.add(word.slice(0, i) + word[i]! + word.slice(i));
    out.add(word.slice(0, i) + (word[i] === 'x' ? 'y' : 'x') + word.slice(i + 1));
    if (i + 1 < word.length) out.add(word.slice(0, i) + word[i + 1]! + word[i]! + word.slice(i + 2));
  }
  out.delete(word);
  return [...out];
}

describe('an action type the risk matrix does not list', () => {
  it('a listed type has no reason: its own tier applies', () => {
    for (const type of listed) expect(unlistedActionTypeReason(policy, type)).toBeNull();
  });

  it('every one-edit slip of every listed type names that type first among the closest', () => {
    let checked = 0;
    for (const type of listed) {
      for (const slip of slips(type)) {
        if (listed.includes(slip)) continue;
        const closest = closestActionTypes(listed, slip);
        expect(closest.length, slip).toBeGreaterThan(0);
        expect(closest.length).toBeLessThanOrEqual(3);
        // The nearest is at distance 1, as the slip's own type is: the type itself is among those offered.
        expect(editDistance(slip, closest[0]!)).toBe(1);
        if (closest.length < 3) expect(closest, slip).toContain(type);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(500);
  });

  it('says "not in the risk matrix", the default tier and the closest types; nothing for a stranger', () => {
    expect(unlistedActionTypeReason(policy, 'memry_write')).toBe(
      `action_type "memry_write" is not in the risk matrix of policy ${policy.metadata.name} (did you mean ` +
        `memory_write?): its default tier ${policy.spec.defaultTier} applies`,
    );
    expect(unlistedActionTypeReason(policy, 'launch_rocket')).toBe(
      `action_type "launch_rocket" is not in the risk matrix of policy ${policy.metadata.name}: its default tier ` +
        `${policy.spec.defaultTier} applies`,
    );
  });

  it('edit distance on generated words: symmetric, zero only for equal words, bounded by the lengths', () => {
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const word = () => Array.from({ length: Math.floor(rand() * 8) }, () => 'abc_'[Math.floor(rand() * 4)]).join('');
    for (let n = 0; n < 2000; n++) {
      const [a, b, c] = [word(), word(), word()];
      expect(editDistance(a, b)).toBe(editDistance(b, a));
      expect(editDistance(a, b) === 0).toBe(a === b);
      expect(editDistance(a, b)).toBeLessThanOrEqual(Math.max(a.length, b.length));
      expect(editDistance(a, c)).toBeGreaterThanOrEqual(Math.abs(a.length - c.length));
    }
  });

  it('the terminal outcome says why a person decides', () => {
    const text = renderOutcome({
      proposal_id: 'p-1',
      workflow_id: 'proposal-1',
      status: 'awaiting_human',
      verdict: null,
      verdicts: [],
      execution: null,
      escalation_reason: `${unlistedActionTypeReason(policy, 'memry_write')}, a person must decide`,
    });
    expect(text).toContain('why       action_type "memry_write" is not in the risk matrix');
    expect(text).toContain('(did you mean memory_write?): its default tier human-only applies, a person must decide');
  });
});
