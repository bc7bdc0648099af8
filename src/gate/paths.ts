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
  | { kind: 'protected'; why: string };

/** The roots of `spec.hooks.files.roots`, absolute (against `base`) and real. */
export function realRoots(roots: readonly string[], base: string): string[] {
  return roots.map((r) => realPath(isAbsolute(r) ? r : resolve(base, r), base));
}

/** Where `p` leads from `ctx.cwd`, and whether it may be touched. */
export function pathVerdict(p: string, ctx: PathContext): PathVerdict {
  if (p.length === 0 || p.includes('\0')) return { kind: 'outside', why: 'is not a path' };
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
