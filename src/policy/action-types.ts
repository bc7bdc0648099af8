/**
 * Action types the risk matrix does not list (seed 000 §2: unknown never passes, the default tier applies). A typo
 * such as `memry_write` is such a type: the one reason every surface shows for it names the closest listed types.
 * Pure (workflow code calls it): no Node built-ins.
 */
import type { CompliancePolicy } from '../contracts/policy';

/**
 * Edit distance with adjacent transpositions (optimal string alignment): `memroy` is one step from `memory`.
 * Hand-written (a dozen lines) because it runs inside the workflow bundle, where a dependency would be loaded for
 * every proposal.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The listed action types closest to `actionType` (at most three, nearest first), among those within a third of its
 * length in edits (at least one edit, so one-letter slips always match): what "did you mean" offers.
 */
export function closestActionTypes(listed: readonly string[], actionType: string, max = 3): string[] {
  const limit = Math.max(1, Math.floor(actionType.length / 3));
  return listed
    .map((type) => ({ type, distance: editDistance(actionType.toLowerCase(), type.toLowerCase()) }))
    .filter((c) => c.distance <= limit)
    .sort((x, y) => x.distance - y.distance || x.type.localeCompare(y.type))
    .slice(0, max)
    .map((c) => c.type);
}

/**
 * Why a proposal of `actionType` gets the policy's default tier, or null when the risk matrix lists it: "not in the
 * risk matrix", the tier that applies, and the closest listed types.
 */
export function unlistedActionTypeReason(policy: CompliancePolicy, actionType: string): string | null {
  const listed = policy.spec.riskMatrix.map((e) => e.actionType);
  if (listed.includes(actionType)) return null;
  const closest = closestActionTypes(listed, actionType);
  const guess = closest.length > 0 ? ` (did you mean ${closest.join(', ')}?)` : '';
  return (
    `action_type ${JSON.stringify(actionType.slice(0, 100))} is not in the risk matrix of policy ` +
    `${policy.metadata.name}${guess}: its default tier ${policy.spec.defaultTier} applies`
  );
}
