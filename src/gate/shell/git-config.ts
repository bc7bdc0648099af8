/**
 * Whether a `git` the hooks would let run at once in the agent's own shell could run a program because of its
 * repository's config. The agent's runtime runs that git, not agent-judge's executor, so nothing can point it at a
 * safe repository or strip settings (src/guards/git.ts does that for `exec`); the hooks can only decline to allow it
 * without judgement. A repository whose own config sets a key from {@link PROGRAM_CONFIG_KEYS} (filters, drivers,
 * `core.fsmonitor`, `core.hooksPath`, includes, ...) sends every git line to the judge; so does one whose `.git` is a
 * file (a linked worktree or submodule: its config lives elsewhere) or whose config cannot be read exactly.
 * Synchronous and file reads only: it is on the hook's fast path.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { programConfigKeys, repositoryConfigFiles } from '../../guards/git';

/** The first `.git` at or above `cwd`: a directory, a file, or none. */
function findDotGit(cwd: string): { dir: string; isDirectory: boolean } | null {
  for (let dir = cwd; ; dir = dirname(dir)) {
    try {
      const s = statSync(join(dir, '.git'));
      return { dir: join(dir, '.git'), isDirectory: s.isDirectory() };
    } catch {
      /* not here: one level up */
    }
    if (dirname(dir) === dir) return null;
  }
}

/**
 * The keys a git config file sets (`section.subsection.name`, lower-cased section and name), or null when a line is
 * not one git-config(1) syntax this reader knows: the caller then does not trust the file.
 */
export function gitConfigKeys(text: string): string[] | null {
  const keys: string[] = [];
  let section: string | null = null;
  let continued = false;
  for (const raw of text.split(/\r?\n/)) {
    if (continued) {
      continued = /\\$/.test(raw);
      continue;
    }
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$/.exec(line);
    if (header) {
      const [, name, sub, rest] = header;
      section = sub === undefined ? name!.toLowerCase() : `${name!.toLowerCase()}.${sub}`;
      if (rest === '' || rest!.startsWith('#') || rest!.startsWith(';')) continue;
      // A key on the header's own line: `[core] fsmonitor = x`.
      const inline = /^([A-Za-z][A-Za-z0-9-]*)\s*(=.*)?$/.exec(rest!);
      if (!inline) return null;
      keys.push(`${section}.${inline[1]!.toLowerCase()}`);
      continued = /\\$/.test(rest!);
      continue;
    }
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*(=.*)?$/.exec(line);
    if (!entry || section === null) return null;
    keys.push(`${section}.${entry[1]!.toLowerCase()}`);
    continued = /\\$/.test(line);
  }
  return keys;
}

/** Why git in `cwd` must be judged rather than allowed at once, or null when its repository runs no program. */
export function gitConfigProblem(cwd: string): string | null {
  const found = findDotGit(cwd);
  if (!found) return null;
  if (!found.isDirectory) return `${found.dir} is a file (a linked worktree or submodule): git is judged there`;
  for (const file of repositoryConfigFiles(found.dir)) {
    let keys: string[] | null;
    try {
      keys = gitConfigKeys(readFileSync(file, 'utf8'));
    } catch (err) {
      return `${file} cannot be read (${(err as Error).message}): git is judged there`;
    }
    if (keys === null) return `${file} has a line this reader does not know: git is judged there`;
    const risky = programConfigKeys(keys);
    if (risky.length > 0) {
      return `the repository's config ${file} sets ${risky.slice(0, 3).join(', ')}, which can make git run a program`;
    }
  }
  return null;
}
