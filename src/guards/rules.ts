import { normalizeRepoPath as repoPath, withinScope } from '../contracts/repo-path';
import type { CompliancePolicy } from '../contracts/policy';
import { isAction, type Proposal } from '../contracts/proposal';
import { GIT_REPOSITORIES_FIELD, namedRepositoryFor } from './git';
import { confine, realPath } from './paths';
import { memoryStoreFinding } from '../contracts/memory-stores';
import type { RuleFinding } from '../contracts/verdict';

/** What the rules need besides the proposal: the policy, and where relative paths start. */
export interface RuleContext {
  policy: CompliancePolicy;
  /** Directory relative paths resolve against (the worker's working directory). */
  baseDir: string;
}

/** Git options that write files, run programs, or read outside the repository, in full. */
const RISKY_GIT_OPTIONS = [
  '--output',
  '--ext-diff',
  '--textconv',
  '--no-index',
  '--exec',
  '--upload-pack',
  '--receive-pack',
  '--config-env',
  '--show-signature',
  '--format',
  '--pretty',
  '--open-files-in-pager',
];

/** True when `arg` is a risky git option or an abbreviation git would expand to one. */
function isRiskyGitOption(arg: string): boolean {
  if (!arg.startsWith('--') || arg === '--') return false;
  const name = arg.split('=')[0]!;
  return name.length >= 3 && RISKY_GIT_OPTIONS.some((opt) => opt.startsWith(name));
}

/**
 * Names that give a folder a git repository's shape: git takes a folder as a repository only when it holds a HEAD
 * (next to objects/ and refs/), and packed-refs is a repository's ref store. No agent writes a file or folder of these
 * names, at any level and in any case (case-insensitive file systems).
 */
export const REPOSITORY_SHAPED_NAMES: readonly string[] = ['head', 'packed-refs'];

/** The first component of a written path that is a repository-shaped name, or undefined. */
export function repositoryShapedComponent(components: readonly string[]): string | undefined {
  return components.find((c) => REPOSITORY_SHAPED_NAMES.includes(c.toLowerCase()));
}

function optionAllowed(arg: string, allowed: readonly string[]): boolean {
  return allowed.some((o) => (o.endsWith('=*') ? arg.startsWith(o.slice(0, -1)) : arg === o));
}

/**
 * Exec guard shared by the judge and the executor: a bare allowlisted program, an allowed
 * subcommand, only allowlisted options, and path arguments that stay inside the allowed
 * directories (resolved against `cwd`, symlinks followed).
 */
export function checkExec(
  argv: readonly string[],
  policy: CompliancePolicy,
  where: { cwd: string; baseDir: string },
): RuleFinding | null {
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
      reason:
        `${program} ${JSON.stringify(sub ?? '')} is not allowed; ` +
        `allowed: ${entry.subcommands.join(', ')} as the first argument`,
    };
  }
  const args = argv.slice(entry.subcommands ? 2 : 1);
  for (const arg of args) {
    if (program === 'git' && isRiskyGitOption(arg)) {
      return { verdict: 'REJECT', rule: 'exec.risky-option', reason: `option ${JSON.stringify(arg)} is not allowed` };
    }
    if (arg.startsWith('-') && arg !== '--') {
      if (entry.options && !optionAllowed(arg, entry.options)) {
        return {
          verdict: 'REJECT',
          rule: 'exec.option',
          reason: `option ${JSON.stringify(arg)} is not allowed for ${program}; allowed: ${entry.options.join(' ')}`,
        };
      }
    } else if (entry.pathArgs && arg !== '--' && !confine(arg, policy.spec.exec.cwdRoots, where.cwd)) {
      return {
        verdict: 'REJECT',
        rule: 'exec.path-arg',
        reason: `argument ${JSON.stringify(arg)} points outside the allowed directories`,
      };
    }
  }
  if (program === 'git') {
    // Refused before any approval: git reads config and metadata from the folder it discovers, which an agent could
    // have written (a filter there runs during `git status`), or from the checkout above the workspace.
    let cwd: string | null;
    try {
      cwd = realPath(where.cwd, where.baseDir);
    } catch {
      cwd = null;
    }
    const repo = cwd === null ? null : namedRepositoryFor(cwd, policy, where.baseDir);
    if (!repo) {
      const named = policy.spec.exec.git.repositories;
      return {
        verdict: 'REJECT',
        rule: 'exec.git-repository',
        reason:
          `git runs only with its cwd inside a repository ${GIT_REPOSITORIES_FIELD} names ` +
          (named.length === 0
            ? '(the policy names none)'
            : `(${named.map((r) => `${r.name}: ${r.path}`).join(', ')}); ` +
              `cwd ${JSON.stringify(cwd ?? where.cwd)} is in none`),
      };
    }
  }
  return null;
}

/**
 * The hard rules: anything they find is a REJECT, whatever a model or a person might think of the
 * justification. The executor runs them again right before acting.
 */
export function hardRules(proposal: Proposal, ctx: RuleContext): RuleFinding | null {
  const { policy, baseDir } = ctx;
  const scope = proposal.scope_claim;

  if (isAction(proposal, 'forgejo_pr_create')) {
    const files = proposal.parameters.files_changed;
    const escaping = files.find((f) => repoPath(f) === null);
    if (escaping !== undefined) {
      return {
        verdict: 'REJECT',
        rule: 'scope.path-escape',
        reason: `file ${JSON.stringify(escaping)} escapes the repository root`,
      };
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
    const lines = proposal.parameters.estimated_diff_lines;
    if (scope.max_lines !== undefined && lines > scope.max_lines) {
      return {
        verdict: 'REJECT',
        rule: 'scope.max_lines',
        reason: `estimated_diff_lines ${lines} is above scope_claim.max_lines ${scope.max_lines}`,
      };
    }
  }

  const store = memoryStoreFinding(proposal, policy);
  if (store) return store;

  if (isAction(proposal, 'exec')) {
    const p = proposal.parameters;
    const cwd = p.cwd !== undefined ? confine(p.cwd, policy.spec.exec.cwdRoots, baseDir) : null;
    if (p.cwd !== undefined && !cwd) {
      return {
        verdict: 'REJECT',
        rule: 'exec.cwd',
        reason: `cwd ${JSON.stringify(p.cwd)} is outside the allowed directories`,
      };
    }
    const finding = checkExec(p.command, policy, {
      cwd: cwd?.real ?? policy.spec.exec.cwdRoots[0]!,
      baseDir,
    });
    if (finding) return finding;
  }

  if (isAction(proposal, 'file_write')) {
    const path = proposal.target.path;
    // A planted .git directory or attributes file turns read-only git commands into code execution
    // (config: diff.external, filters, fsmonitor); no agent writes repository metadata.
    const components = path.split(/[\\/]+/).map((c) => c.toLowerCase());
    const metadata = components.find(
      (c) => c === '.git' || c === '.gitattributes' || c === '.gitmodules' || c === '.gitconfig',
    );
    if (metadata) {
      return {
        verdict: 'REJECT',
        rule: 'files.git-metadata',
        reason: `path ${JSON.stringify(path)} writes git metadata (${metadata})`,
      };
    }
    const shaped = repositoryShapedComponent(path.split(/[\\/]+/));
    if (shaped) {
      return {
        verdict: 'REJECT',
        rule: 'files.repository-shape',
        reason: `path ${JSON.stringify(path)} would give a folder a git repository's shape (${shaped})`,
      };
    }
    if (!confine(path, policy.spec.files.roots, baseDir)) {
      return {
        verdict: 'REJECT',
        rule: 'files.roots',
        reason:
          `path ${JSON.stringify(path)} resolves outside the allowed roots ` +
          `(${policy.spec.files.roots.join(', ')})`,
      };
    }
  }
  return null;
}
