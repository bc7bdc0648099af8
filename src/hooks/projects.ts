/**
 * Hooked projects: one gate serves every project a user hooks. `agent-judge hook install` registers the project's
 * folder with the running gate (authenticated by the gate's own dev token, which only the user reads: it lies in a
 * protected folder no judged tool opens); the gate answers with a token of that project's own, kept in the user's
 * state folder. A hook call made with a project token is judged with that project's roots (the policy's
 * `spec.hooks.files.roots` resolved against the project's folder) and refused when the runtime's `cwd` lies outside
 * the project. So an agent holding its project's token can neither register roots nor act as another project.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { realpathSync } from 'node:fs';
import { newAgentToken, tokenSha256 } from '../gate/http-auth';
import { isInside } from '../guards/paths';

/** One hooked project as the registry keeps it: its real folder and its token's SHA-256. */
export interface HookedProject {
  dir: string;
  tokenSha256: string;
  registered_at: string;
}

interface RegistryFile {
  projects: HookedProject[];
}

/** At most this many projects (a registry is per user; this bounds what a flood of registrations could make). */
export const MAX_PROJECTS = 1000;

/** Why `dir` cannot be a hooked project, or null. `stateDirs` must stay out of its roots unless protected. */
export function projectDirProblem(
  dir: string,
  o: { stateDirs: readonly string[]; protect: readonly string[]; home?: string },
): string | null {
  if (!isAbsolute(dir)) return `${dir} is not an absolute path`;
  let real: string;
  try {
    real = realpathSync(dir);
    if (!statSync(real).isDirectory()) return `${dir} is not a folder`;
  } catch {
    return `${dir} does not exist`;
  }
  const home = realOrSelf(o.home ?? homedir());
  if (real === dirname(real)) return `${real} is the file system's root: hook a project folder`;
  if (isInside(home, real)) return `${real} holds the home folder: hook a project folder`;
  for (const state of o.stateDirs.map(realOrSelf)) {
    if (isInside(real, state)) return `${real} lies inside agent-judge's state folder ${state}`;
    if (isInside(state, real)) {
      // The project would hold agent-judge's state (tokens, keys): only behind a protected name no tool opens.
      const below = relative(real, state).split(sep);
      if (!below.some((c) => o.protect.includes(c.toLowerCase()))) {
        return `${real} holds agent-judge's state folder ${state} outside spec.hooks.files.protect`;
      }
    }
  }
  return null;
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** The registry in `<stateDir>/projects.json`, the tokens in `<stateDir>/projects/<id>.token` (0600). */
export class ProjectRegistry {
  private cache: { mtimeMs: number; projects: HookedProject[] } | null = null;

  constructor(private readonly stateDir: string) {}

  private get file(): string {
    return join(this.stateDir, 'projects.json');
  }

  /** The token file of the project at `dir` (real path). */
  tokenFile(dir: string): string {
    return join(this.stateDir, 'projects', `${createHash('sha256').update(dir).digest('hex').slice(0, 24)}.token`);
  }

  list(): HookedProject[] {
    try {
      const { mtimeMs } = statSync(this.file);
      if (this.cache?.mtimeMs === mtimeMs) return this.cache.projects;
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as RegistryFile;
      const projects = Array.isArray(parsed?.projects)
        ? parsed.projects.filter(
            (p) =>
              typeof p?.dir === 'string' && typeof p.tokenSha256 === 'string' && /^[0-9a-f]{64}$/.test(p.tokenSha256),
          )
        : [];
      this.cache = { mtimeMs, projects };
      return projects;
    } catch {
      return [];
    }
  }

  /** The project whose token this is, or null (every digest compared in constant time). */
  byToken(token: string): HookedProject | null {
    const presented = Buffer.from(tokenSha256(token), 'hex');
    let found: HookedProject | null = null;
    for (const p of this.list()) {
      const listed = Buffer.from(p.tokenSha256, 'hex');
      if (listed.length === presented.length && timingSafeEqual(listed, presented) && found === null) found = p;
    }
    return found;
  }

  /**
   * Registers `dir` (already checked by {@link projectDirProblem}): the existing token when its file still holds it,
   * else a new one (the old one stops working).
   */
  register(dir: string): { dir: string; tokenFile: string; created: boolean } {
    const real = realpathSync(dir);
    const tokenFile = this.tokenFile(real);
    const projects = this.list().filter((p) => p.dir !== real);
    const known = this.list().find((p) => p.dir === real);
    if (known && existsSync(tokenFile)) {
      const token = readFileSync(tokenFile, 'utf8').trim();
      if (tokenSha256(token) === known.tokenSha256) return { dir: real, tokenFile, created: false };
    }
    if (projects.length >= MAX_PROJECTS) throw new Error(`at most ${MAX_PROJECTS} projects can be hooked`);
    const token = newAgentToken();
    mkdirSync(dirname(tokenFile), { recursive: true, mode: 0o700 });
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    chmodSync(tokenFile, 0o600);
    projects.push({ dir: real, tokenSha256: tokenSha256(token), registered_at: new Date().toISOString() });
    this.save(projects);
    return { dir: real, tokenFile, created: true };
  }

  /** Forgets `dir` (its token stops working); whether it was registered. */
  forget(dir: string): boolean {
    const real = realOrSelf(dir);
    const projects = this.list();
    const left = projects.filter((p) => p.dir !== real);
    if (left.length === projects.length) return false;
    this.save(left);
    return true;
  }

  private save(projects: HookedProject[]): void {
    mkdirSync(this.stateDir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ projects }, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.file);
    this.cache = null;
  }
}
