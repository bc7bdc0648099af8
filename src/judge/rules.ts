import type { RuleFinding } from '../contracts/verdict';
import type { Proposal } from '../contracts/proposal';
import { hardRules, type RuleContext } from '../guards/rules';

/**
 * The deterministic judge for full-judge-review (issue 2): hard rules first (deny wins), then
 * evidence, else APPROVE. Confidence is 1: a rule either holds or it does not.
 */
export function judgeByRules(proposal: Proposal, ctx: RuleContext): RuleFinding {
  const hard = hardRules(proposal, ctx);
  if (hard) return hard;
  if (proposal.cited_evidence.length === 0) {
    return {
      verdict: 'CLARIFY',
      rule: 'evidence.missing',
      reason:
        'cited_evidence is empty: cite the issue, task assignment or request this action serves ' +
        '(for example {"type":"issue","url":"..."})',
    };
  }
  return {
    verdict: 'APPROVE',
    rule: 'rules.passed',
    reason: 'no rule objects: scope, allowlist and paths are within policy',
  };
}
