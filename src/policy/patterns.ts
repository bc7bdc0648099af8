import type { Proposal } from '../contracts/proposal';
import type { CompliancePolicy } from '../contracts/policy';
import type { RuleFinding } from '../contracts/verdict';
import { normaliseForMatching } from './normalise';

type Leaf = [path: string, text: string];

/**
 * Every leaf under `value` with its dotted path. Objects and arrays are walked to the bottom, so a
 * rule on a field that names an object still sees each string inside it (never `[object Object]`).
 * Numbers and booleans count as text only when `scalars` is set (a rule aimed at a field).
 */
function leavesOf(value: unknown, path: string, scalars: boolean, out: Leaf[] = []): Leaf[] {
  if (typeof value === 'string') out.push([path, value]);
  else if (scalars && (typeof value === 'number' || typeof value === 'boolean')) out.push([path, String(value)]);
  else if (Array.isArray(value)) value.forEach((v, i) => leavesOf(v, `${path}[${i}]`, scalars, out));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) leavesOf(v, path ? `${path}.${k}` : k, scalars, out);
  }
  return out;
}

/** Every string the proposal carries in its action and justification, with its dotted path. */
export function textLeaves(proposal: Proposal): Leaf[] {
  return [
    ...leavesOf(proposal.target, 'target', false),
    ...leavesOf(proposal.parameters, 'parameters', false),
    ...leavesOf(proposal.justification, 'justification', false),
  ];
}

/** The value at a dotted path; own properties only, so `constructor` or `__proto__` read nothing. */
function valueAt(proposal: Proposal, dotted: string): unknown {
  let cur: unknown = proposal;
  for (const key of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** The texts a rule looks at: every leaf under its field, or every string of the proposal. */
function candidatesFor(proposal: Proposal, field: string | undefined): Leaf[] {
  return field ? leavesOf(valueAt(proposal, field), field, true) : textLeaves(proposal);
}

/**
 * The lightweight-approval check of seed 000 §2: deny patterns anywhere, then the action type's
 * topic list if it has one. Pure and synchronous (well under 1 ms), so the workflow runs it itself.
 */
export function lightweightCheck(proposal: Proposal, policy: CompliancePolicy): RuleFinding {
  const { deny, topics } = policy.spec.lightweight;
  // Deny reads both forms (either one matching rejects); a topic rule allows only when both match, so neither a
  // zero-width space nor a look-alike letter changes what a rule decides (src/policy/normalise.ts).
  for (const rule of deny) {
    const re = new RegExp(rule.pattern, 'iu');
    const hit = candidatesFor(proposal, rule.field).find(
      ([, text]) => re.test(text) || re.test(normaliseForMatching(text)),
    );
    if (hit) return { verdict: 'REJECT', rule: rule.name, reason: `${hit[0]} matches deny rule ${rule.name}` };
  }
  const allowed = topics[proposal.action_type];
  if (allowed && allowed.length > 0) {
    // A topic rule allows; over an object or array it must hold for every text inside, or one
    // innocent leaf would carry the rest through.
    const match = allowed.find((rule) => {
      const re = new RegExp(rule.pattern, 'u');
      const holds = (text: string) => re.test(text) && re.test(normaliseForMatching(text));
      if (!rule.field) return holds(proposal.justification);
      const texts = leavesOf(valueAt(proposal, rule.field), rule.field, true);
      return texts.length > 0 && texts.every(([, text]) => holds(text));
    });
    if (!match) {
      return {
        verdict: 'REJECT',
        rule: 'topics.no-match',
        reason: `no topic rule for ${proposal.action_type} matches (${allowed.map((r) => r.name).join(', ')})`,
      };
    }
    return { verdict: 'APPROVE', rule: match.name, reason: `matches topic rule ${match.name}; no deny rule matched` };
  }
  return { verdict: 'APPROVE', rule: 'patterns.clean', reason: 'no deny rule matched' };
}
