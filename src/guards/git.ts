/**
 * Which repository an allowlisted git command may read, and whether that repository's own config could make git run
 * a program. git takes any folder with a HEAD, objects/ and refs/ as a repository, and a repository's config can name
 * programs for the most read-only commands (a clean filter runs during `git status`); a folder an agent filled with
 * file writes must never be one. So git runs only in repositories the operator names
 * (spec.exec.git.repositories), pointed at them explicitly, and not at all when their config names a program.
 */
import { existsSync, lstatSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CompliancePolicy } from '../contracts/policy';
import { isInside, realPath } from './paths';

/** The policy field that names the repositories, for messages. */
export const GIT_REPOSITORIES_FIELD = 'spec.exec.git.repositories';

export interface NamedRepository {
  name: string;
  /** The repository's path as the policy gives it, and real (against the base directory). */
  path: string;
  real: string;
}

/**
 * The named repository a git command running in `cwd` (real) reads: the innermost one whose path is `cwd` or holds
 * it. Null when none does.
 */
export function namedRepositoryFor(cwd: string, policy: CompliancePolicy, baseDir: string): NamedRepository | null {
  let best: NamedRepository | null = null;
  for (const repo of policy.spec.exec.git.repositories) {
    let real: string;
    try {
      real = realPath(repo.path, baseDir);
    } catch {
      continue; // a symlink loop names nothing
    }
    if (isInside(cwd, real) && (best === null || real.length > best.real.length)) {
      best = { name: repo.name, path: repo.path, real };
    }
  }
  return best;
}

/** Where git is pointed for a named repository: its git directory and, for a checkout, its work tree. */
export type GitLocation = { gitDir: string; workTree: string | null } | { refused: string };

/**
 * A checkout's `.git` directory, or the repository itself when it is bare. A `.git` file (a linked worktree or a
 * submodule) is refused: its config lives elsewhere, so name the main checkout instead.
 */
export function locateRepository(repo: NamedRepository): GitLocation {
  const dotGit = join(repo.real, '.git');
  let dotGitStat;
  try {
    dotGitStat = lstatSync(dotGit);
  } catch {
    dotGitStat = null;
  }
  if (dotGitStat && !dotGitStat.isDirectory() && !dotGitStat.isSymbolicLink()) {
    return {
      refused:
        `repository ${repo.name} (${repo.path}) has a .git file (a linked worktree or a submodule); ` +
        'name the main checkout',
    };
  }
  const isDir = (p: string) => {
    try {
      return statSync(p).isDirectory();
    } catch {
      return false;
    }
  };
  let gitDir: string | null = null;
  try {
    gitDir = dotGitStat ? realpathSync(dotGit) : null;
  } catch {
    return { refused: `repository ${repo.name} (${repo.path}) has a .git symlink that leads nowhere` };
  }
  if (gitDir !== null && isDir(gitDir)) {
    if (existsSync(join(gitDir, 'commondir'))) {
      return { refused: `repository ${repo.name} (${repo.path}) is a linked worktree; name the main checkout` };
    }
    return { gitDir, workTree: repo.real };
  }
  if (existsSync(join(repo.real, 'HEAD')) && isDir(join(repo.real, 'objects')) && isDir(join(repo.real, 'refs'))) {
    return { gitDir: repo.real, workTree: null };
  }
  return { refused: `repository ${repo.name} (${repo.path}) is not a git repository (no .git directory, not bare)` };
}

/**
 * Config keys that make git run a program (or read more config that could), matched against keys as
 * `git config --list` prints them, lowercased. Any of them in a named repository's own config refuses every git
 * command there; the executor also overrides several on the command line (GIT_SAFETY in src/executors/exec.ts).
 */
export const PROGRAM_CONFIG_KEYS: readonly RegExp[] = [
  /^include\./, // include.path and includeIf.*.path pull in other files, which could set any of these
  /^includeif\./,
  /^filter\..+\.(clean|smudge|process)$/,
  /^diff\.external$/,
  /^diff\..+\.(command|textconv)$/,
  /^merge\..+\.driver$/,
  /^(diff|merge)\.(tool|guitool)$/,
  /^(difftool|mergetool)\..+\.cmd$/,
  /^core\.(fsmonitor|hookspath|sshcommand|pager|editor|askpass|gitproxy|alternaterefscommand)$/,
  /^pager\./,
  /^alias\./,
  /^credential\./,
  /^gpg\.(.+\.)?program$/,
  /^sequence\.editor$/,
  /^interactive\.difffilter$/,
  /^uploadpack\./,
  /^receivepack\./,
  /^uploadarchive\./,
  /^remote\..+\.(uploadpack|receivepack|vcs|promisor)$/,
  /^extensions\.partialclone$/, // a promisor remote: a missing object makes `git log -p` fetch (ssh, any transport)
  /^protocol\./,
  /^ssh\.variant$/,
  /^sendemail\./,
  /^tar\..+\.command$/,
  /^trailer\..+\.(command|cmd)$/,
  /^hook\./,
  /^submodule\..+\.update$/,
  /^(web|browser|man|instaweb|guitool)\./,
];

/** The keys of `keys` that run a program (see {@link PROGRAM_CONFIG_KEYS}). */
export function programConfigKeys(keys: readonly string[]): string[] {
  return keys.filter((k) => PROGRAM_CONFIG_KEYS.some((re) => re.test(k.toLowerCase())));
}

/** The config files of a git directory that git reads for a command in it. */
export function repositoryConfigFiles(gitDir: string): string[] {
  return ['config', 'config.worktree'].map((f) => join(gitDir, f)).filter((f) => existsSync(f));
}
