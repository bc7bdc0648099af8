/**
 * Repository-relative paths, normalised without Node built-ins so workflow code can use them too.
 * Percent-encoding is decoded and backslashes become slashes first, so `src%2F..%2Fetc` and
 * `src\..\etc` cannot pass as single names.
 */

/** The normal form of a repository path, or null when it is absolute or climbs out of the root. */
export function normalizeRepoPath(p: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(p);
  } catch {
    return null;
  }
  const slashed = decoded.replace(/\\/g, '/');
  if (slashed.startsWith('/')) return null;
  const parts: string[] = [];
  for (const part of slashed.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  return parts.length === 0 ? '.' : parts.join('/');
}

/** True when `file` lies within one of the `scope` directories (or names one of them). */
export function withinScope(file: string, scope: readonly string[]): boolean {
  const f = normalizeRepoPath(file);
  if (f === null) return false;
  return scope.some((s) => {
    const dir = normalizeRepoPath(s);
    if (dir === null) return false;
    return dir === '.' || f === dir || f.startsWith(`${dir}/`);
  });
}
