import { normalizeRepoPath as repoPath, withinScope } from '../contracts/repo-path';
import type { CompliancePolicy } from '../contracts/policy';
import type { Proposal } from '../contracts/proposal';
import { confine } from './paths';
import type { RuleFinding } from './patterns';

/** What the rules need besides the proposal: the policy, and where relative paths start. */
export interface RuleContext {
  policy: CompliancePolicy;
  /** Directory relative paths resolve against (the worker's working directory). */
  baseDir: string;
}

/** Exec guard shared by the judge and the executor: bare allowlisted program, allowed subcommand. */
export function checkExec(argv: readonly string[], policy: CompliancePolicy): RuleFinding | null {
  const [program, sub] = argv;
  if (!program) return { verdict: 'REJECT', rule: 'exec.allowlist', reason: 'empty command' };
  const entry = policy.spec.exec.allowlist.find((e) => e.command === program);
  if (!entry) {
    return {
      verdict: 'REJECT',
      rule: 'exec.allowlist',
      reason: `command ${JSON.stringify(program)} is not on the exec allowlist (${policy.spec.exec.allowlist
        .map((e) => (e.subcommands ? `${e.command} ${e.subcommands.join('|')}` : e.command))
        .join(', ')})`,
    };
  }
  if (entry.subcommands && (sub === undefined || !entry.subcommands.includes(sub))) {
    return {
      verdict: 'REJECT',
      rule: 'exec.allowlist',
      reason: `${program} ${JSON.stringify(sub ?? '')} is not allowed; allowed: ${entry.subcommands.join(', ')} as the first argument`,
    };
  }
  // Options that make read-only git commands write files, run programs, or (--no-index) read any
  // file on the host outside the repository.
  const risky = argv.slice(1).find((a) => /^--(?:output|ext-diff|textconv|no-index|exec|upload-pack|receive-pack|config-env)\b/.test(a));
  if (risky) return { verdict: 'REJECT', rule: 'exec.risky-option', reason: `option ${JSON.stringify(risky)} is not allowed` };
  return null;
}

/**
 * The hard rules: anything they find is a REJECT, whatever a model or a person might think of the
 * justification. The executor runs them again right before acting.
 */
export function hardRules(proposal: Proposal, ctx: RuleContext): RuleFinding | null {
  const { policy, baseDir } = ctx;
  const p = proposal.parameters;
  const scope = proposal.scope_claim;

  if (proposal.action_type === 'forgejo_pr_create') {
    const files = (p.files_changed as string[] | undefined) ?? [];
    const escaping = files.find((f) => repoPath(f) === null);
    if (escaping !== undefined) {
      return { verdict: 'REJECT', rule: 'scope.path-escape', reason: `file ${JSON.stringify(escaping)} escapes the repository root` };
    }
    if (scope.files_only) {
      const outside = files.filter((f) => !withinScope(f, scope.files_only ?? []));
      if (outside.length > 0) {
        return {
          verdict: 'REJECT',
          rule: 'scope.files_only',
          reason: `${outside.length} file(s) outside scope_claim.files_only (${scope.files_only.join(', ')}): ${outside
            .slice(0, 5)
            .map((f) => JSON.stringify(f))
            .join(', ')}`,
        };
      }
    }
    const lines = p.estimated_diff_lines as number | undefined;
    if (scope.max_lines !== undefined && lines !== undefined && lines > scope.max_lines) {
      return {
        verdict: 'REJECT',
        rule: 'scope.max_lines',
        reason: `estimated_diff_lines ${lines} is above scope_claim.max_lines ${scope.max_lines}`,
      };
    }
  }

  if (proposal.action_type === 'exec') {
    const finding = checkExec((p.command as string[] | undefined) ?? [], policy);
    if (finding) return finding;
    if (typeof p.cwd === 'string' && !confine(p.cwd, policy.spec.exec.cwdRoots, baseDir)) {
      return { verdict: 'REJECT', rule: 'exec.cwd', reason: `cwd ${JSON.stringify(p.cwd)} is outside the allowed directories` };
    }
  }

  if (proposal.action_type === 'file_write') {
    const path = String(proposal.target.path ?? '');
    if (!confine(path, policy.spec.files.roots, baseDir)) {
      return {
        verdict: 'REJECT',
        rule: 'files.roots',
        reason: `path ${JSON.stringify(path)} resolves outside the allowed roots (${policy.spec.files.roots.join(', ')})`,
      };
    }
  }
  return null;
}

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
        'cited_evidence is empty: cite the issue, task assignment or request this action serves (for example {"type":"issue","url":"..."})',
    };
  }
  return { verdict: 'APPROVE', rule: 'rules.passed', reason: 'no rule objects: scope, allowlist and paths are within policy' };
}
