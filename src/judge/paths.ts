import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * Resolves `p` the way the kernel would when it is written: `..` folded, and every symlink in the
 * longest existing prefix followed. The rest (not yet created) is appended as written.
 */
export function realPath(p: string, base: string): string {
  let current = isAbsolute(p) ? resolve(p) : resolve(base, p);
  const tail: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(current), ...tail.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return join(current, ...tail.reverse());
      tail.push(basename(current));
      current = parent;
    }
  }
}

/** True when `candidate` (already real) is `root` or lies below it. */
export function isInside(candidate: string, root: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The first root (real) that holds the real path of `p`, or null when it escapes them all. */
export function confine(p: string, roots: readonly string[], base: string): { real: string; root: string } | null {
  const real = realPath(p, base);
  for (const root of roots) {
    const realRoot = realPath(root, base);
    if (isInside(real, realRoot)) return { real, root: realRoot };
  }
  return null;
}
