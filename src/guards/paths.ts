import { lstatSync, readlinkSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** Symlinks followed by hand before giving up, like the kernel's ELOOP limit. */
const MAX_LINK_HOPS = 40;

/**
 * Resolves `p` the way the kernel does when it is opened: component by component from `base` (or `/`), each symlink
 * followed where it stands (relative targets from the link's own directory), and `..` taken from the directory reached
 * so far, never folded as text first: `link/..` is the parent of the link's target, as the kernel sees it. A part that
 * does not exist yet is appended as written (a dangling symlink is followed: creating a file through it creates the
 * link's target). Throws on a symlink loop.
 */
export function realPath(p: string, base: string): string {
  let current = isAbsolute(p) ? sep : isAbsolute(base) ? realPath(base, sep) : realPath(resolve(base), sep);
  if (isAbsolute(p) && p === sep) return sep;
  const parts = p.split(/\/+/).filter((c) => c !== '' && c !== '.');
  let hops = 0;
  let exists = true;
  while (parts.length > 0) {
    const part = parts.shift()!;
    if (part === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, part);
    if (exists) {
      let isLink = false;
      try {
        isLink = lstatSync(next).isSymbolicLink();
      } catch {
        exists = false; // nothing there yet: the rest is appended as written
      }
      if (isLink) {
        if (++hops > MAX_LINK_HOPS) throw new Error(`too many levels of symbolic links: ${p}`);
        const target = readlinkSync(next);
        if (isAbsolute(target)) current = sep;
        parts.unshift(...target.split(/\/+/).filter((c) => c !== '' && c !== '.'));
        continue;
      }
    }
    current = next;
  }
  return current;
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
