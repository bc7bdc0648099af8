import type { Proposal } from '../contracts/proposal';
import type { CompliancePolicy } from '../contracts/policy';
import type { RuleFinding } from '../contracts/verdict';

/** Every string the proposal carries in its action and justification, with its dotted path. */
export function textLeaves(proposal: Proposal): Array<[path: string, text: string]> {
  const out: Array<[string, string]> = [];
  const walk = (value: unknown, path: string) => {
    if (typeof value === 'string') out.push([path, value]);
    else if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}[${i}]`));
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
    }
  };
  walk(proposal.target, 'target');
  walk(proposal.parameters, 'parameters');
  walk(proposal.justification, 'justification');
  return out;
}

function valueAt(proposal: Proposal, dotted: string): unknown {
  let cur: unknown = proposal;
  for (const key of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/**
 * The lightweight-approval check of seed 000 §2: deny patterns anywhere, then the action type's
 * topic list if it has one. Pure and synchronous (well under 1 ms), so the workflow runs it itself.
 */
export function lightweightCheck(proposal: Proposal, policy: CompliancePolicy): RuleFinding {
  const { deny, topics } = policy.spec.lightweight;
  for (const rule of deny) {
    const re = new RegExp(rule.pattern, 'iu');
    const candidates: Array<[string, string]> = rule.field
      ? [[rule.field, String(valueAt(proposal, rule.field) ?? '')]]
      : textLeaves(proposal);
    const hit = candidates.find(([, text]) => re.test(text));
    if (hit) return { verdict: 'REJECT', rule: rule.name, reason: `${hit[0]} matches deny rule ${rule.name}` };
  }
  const allowed = topics[proposal.action_type];
  if (allowed && allowed.length > 0) {
    const match = allowed.find((rule) => {
      const value = rule.field ? valueAt(proposal, rule.field) : proposal.justification;
      return typeof value === 'string' && new RegExp(rule.pattern, 'u').test(value);
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
