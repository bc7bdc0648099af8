/**
 * Where a hook call's paths really lead: resolved against the call's working directory with `..` folded and every
 * symlink followed (src/guards/paths.ts), then checked against the hook roots and the protected path components
 * (the runtimes' settings, agent-judge's state, git metadata). An agent that could write these could unhook itself.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { isInside, realPath } from '../guards/paths';
import { repositoryShapedComponent } from '../guards/rules';

export interface PathContext {
  /** The call's working directory (from the runtime, never from the tool's arguments). */
  cwd: string;
  /** The hook roots, absolute and real. */
  roots: readonly string[];
  /** Path components no change may touch, lowercase. */
  protect: readonly string[];
}

export type PathVerdict =
  | { kind: 'inside'; real: string; root: string }
  | { kind: 'outside'; why: string }
  | { kind: 'protected'; why: string }
  /** Refused by a rule of its own, named (`files.tilde`). */
  | { kind: 'refused'; rule: string; why: string };

/** The roots of `spec.hooks.files.roots`, absolute (against `base`) and real. */
export function realRoots(roots: readonly string[], base: string): string[] {
  return roots.map((r) => realPath(isAbsolute(r) ? r : resolve(base, r), base));
}

/** Where `p` leads from `ctx.cwd`, and whether it may be touched. */
export function pathVerdict(p: string, ctx: PathContext): PathVerdict {
  if (p.length === 0 || p.includes('\0')) return { kind: 'outside', why: 'is not a path' };
  // A shell and some tools read `~/x` as the home directory; resolved here it is a folder named `~` in cwd. Which
  // one the runtime opens is not ours to guess, so neither is checked: the path must be written out.
  if (p.startsWith('~')) {
    return {
      kind: 'refused',
      rule: 'files.tilde',
      why: 'starts with ~, which may mean the home directory: write the absolute path',
    };
  }
  let real: string;
  try {
    real = realPath(p, ctx.cwd);
  } catch {
    return { kind: 'outside', why: 'is a symlink loop' };
  }
  const root = ctx.roots.find((r) => isInside(real, r));
  if (root === undefined) {
    return { kind: 'outside', why: `resolves outside the hook roots (${ctx.roots.join(', ')})` };
  }
  // Both as written and as resolved: a symlink named innocently may lead into a protected directory.
  const written = resolve(ctx.cwd, p);
  for (const candidate of [written, real]) {
    const within = ctx.roots.find((r) => isInside(candidate, r));
    if (within === undefined) continue;
    const hit = relative(within, candidate)
      .split(sep)
      .find((c) => ctx.protect.includes(c.toLowerCase()));
    if (hit !== undefined)
      return { kind: 'protected', why: `touches ${hit}, which spec.hooks.files.protect keeps out` };
  }
  return { kind: 'inside', real, root };
}

/**
 * For a change (never a read): the repository-shaped name (HEAD, packed-refs; src/guards/rules.ts) that `p`, as written
 * or as resolved, would create inside its root, or null. Such a file turns the folder into a repository whose config
 * an allowlisted `git status` would obey.
 */
export function repositoryShapeOf(p: string, ctx: PathContext, real: string): string | null {
  for (const candidate of [resolve(ctx.cwd, p), real]) {
    const within = ctx.roots.find((r) => isInside(candidate, r));
    if (within === undefined) continue;
    const hit = repositoryShapedComponent(relative(within, candidate).split(sep));
    if (hit !== undefined) return hit;
  }
  return null;
}

/**
 * For a change (never a read): the component of `p`, as written or as resolved, below its root, that starts with
 * `-`, or null. A file named like an option turns a later glob into an option (`rm *` with a file `-rf` present).
 */
export function optionNamedComponent(p: string, ctx: PathContext, real: string): string | null {
  for (const c of componentsBelowRoot(p, ctx, real)) {
    const hit = c.find((part) => part.startsWith('-'));
    if (hit !== undefined) return hit;
  }
  return null;
}

/**
 * The first of `globs` (`spec.hooks.files.runsPrograms`) that `p`, as written or as resolved, matches, relative to its
 * root; or null. A glob with no `/` matches a file's name at any depth (`.envrc`); one with `/` matches the path from
 * the root (`.github/workflows/**`), `**` spanning folders, `*` and `?` within one; case-insensitive, as the file
 * systems of macOS and Windows are.
 */
export function runsProgramsGlob(p: string, ctx: PathContext, real: string, globs: readonly string[]): string | null {
  for (const parts of componentsBelowRoot(p, ctx, real)) {
    const path = parts.join('/');
    const hit = globs.find((g) => pathGlobMatches(g, path));
    if (hit !== undefined) return hit;
  }
  return null;
}

/** A path glob as {@link runsProgramsGlob} reads it, against a `/`-separated path relative to a root. */
export function pathGlobMatches(glob: string, path: string): boolean {
  const anchored = glob.includes('/');
  const pattern = glob.replace(/^\.\//, '').replace(/^\//, '');
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (pattern.startsWith('**/', i)) {
      source += '(?:.*/)?';
      i += 2;
    } else if (pattern.startsWith('**', i)) {
      source += '.*';
      i += 1;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  const re = new RegExp(`^${source}$`, 'iu');
  if (!anchored) return path.split('/').some((name) => re.test(name));
  // A folder matched by the glob holds what it names: `.husky` names `.husky/pre-commit` too.
  const parts = path.split('/');
  return parts.some((_, i) => re.test(parts.slice(0, i + 1).join('/')));
}

/** `p` as written and as resolved, each split into its components below the root it is in. */
function componentsBelowRoot(p: string, ctx: PathContext, real: string): string[][] {
  const out: string[][] = [];
  for (const candidate of [resolve(ctx.cwd, p), real]) {
    const within = ctx.roots.find((r) => isInside(candidate, r));
    if (within === undefined) continue;
    const rel = relative(within, candidate);
    if (rel !== '') out.push(rel.split(sep));
  }
  return out;
}
