/**
 * Before a program that reads every file under a directory (grep -r, rg) runs at once, the directory is walked: a
 * protected name anywhere below it (`.agent-judge` with its keys, `.env`, `.git` with credentials in its config), or a
 * link leading out of the roots or onto a protected path, means the program would read what the gate keeps out, and
 * the line is judged. The walk is bounded: a tree too large to check in time is judged too. What the program itself
 * would skip (rg's hidden files, its ignore files) is not relied on: an ignore file or a `--glob` can undo it.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathVerdict, type PathContext } from '../paths';

/** Entries looked at, at most, under one directory before the line is judged instead. */
export const MAX_WALK_ENTRIES = 20_000;

/** Why walking `dir` (as written, from `where.cwd`) would reach what the roots or files.protect keep out, or null. */
export function walkProblem(dir: string, where: PathContext): string | null {
  const start = pathVerdict(dir, where);
  if (start.kind !== 'inside') return `it ${start.why}`;
  const seen = new Set<string>();
  const pending = [start.real];
  let entries = 0;
  while (pending.length > 0) {
    const current = pending.pop()!;
    if (seen.has(current)) continue;
    seen.add(current);
    let list;
    try {
      list = readdirSync(current, { withFileTypes: true });
    } catch {
      continue; // a file, or unreadable: the program reads no more of it than the walk does
    }
    for (const entry of list) {
      if (++entries > MAX_WALK_ENTRIES) return `more than ${MAX_WALK_ENTRIES} entries are below it (too many to check)`;
      if (where.protect.includes(entry.name.toLowerCase())) {
        return `${join(current, entry.name)} is below it, which spec.hooks.files.protect keeps out`;
      }
      const full = join(current, entry.name);
      if (entry.isSymbolicLink()) {
        const v = pathVerdict(full, where);
        if (v.kind !== 'inside') return `the link ${full} ${v.why}`;
        pending.push(v.real); // followed (grep -R, rg -L): what it leads to is walked too
      } else if (entry.isDirectory()) {
        pending.push(resolve(full));
      }
    }
  }
  return null;
}
