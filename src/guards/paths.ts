import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** Symlinks followed by hand before giving up, like the kernel's ELOOP limit. */
const MAX_LINK_HOPS = 40;

/** The target of `p` when it is a symlink (dangling or not), else null. */
function linkTarget(p: string): string | null {
  try {
    return lstatSync(p).isSymbolicLink() ? readlinkSync(p) : null;
  } catch {
    return null;
  }
}

/**
 * Resolves `p` the way the kernel would when it is written: `..` folded, and every symlink in the
 * longest existing prefix followed. The rest (not yet created) is appended as written. A dangling
 * symlink is followed too: creating a file through it creates the link's target. Throws on a
 * symlink loop.
 */
export function realPath(p: string, base: string): string {
  let current = isAbsolute(p) ? resolve(p) : resolve(base, p);
  const tail: string[] = [];
  let hops = 0;
  for (;;) {
    try {
      return join(realpathSync(current), ...tail.reverse());
    } catch {
      const link = linkTarget(current);
      if (link !== null) {
        if (++hops > MAX_LINK_HOPS) throw new Error(`too many levels of symbolic links: ${p}`);
        // Relative targets start from the link's real directory, not the path as written.
        current = resolve(realpathSync(dirname(current)), link);
        continue;
      }
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
  let real: string;
  try {
    real = realPath(p, base);
  } catch {
    return null; // a symlink loop confines nothing
  }
  for (const root of roots) {
    const realRoot = realPath(root, base);
    if (isInside(real, realRoot)) return { real, root: realRoot };
  }
  return null;
}
