/**
 * What a shell line really did, read from `strace -ff -y` logs (one file per process), judged against the promise the
 * gate makes for a line it allows at once: it runs only the programs it names, writes nothing, and reads only inside
 * the project root, never under a protected folder (test/security/shell-differential.test.ts, issue 37).
 *
 * Why strace and not a sandbox that forbids: a forbidding sandbox would hide the hole (the write fails, the test
 * passes). strace records every attempt, so a write the gate should have judged is a violation whether or not it
 * succeeded. `-y` makes strace print the directory a relative path is resolved against (`AT_FDCWD</dir>`) and the
 * real path a successful open returned (`= 3</real/path>`), so symlinks out of the project are seen where they land.
 *
 * The exemptions, each because the program does it by itself whatever the line says:
 * - the system files programs open on their own (shared libraries, locale, time zone, name service, git's system
 *   config, `file`'s magic database, name resolution, the scratch HOME's git config): {@link systemFile}.
 *   `/etc/passwd` and
 *   `/etc/group` only for the programs that map ids to names (ls -l, stat, find, tree, git): a `cat` or `grep` that
 *   opens them is a violation, and the caller also looks for /etc/passwd's first line in the output.
 * - git refreshing its index: git status (and diff) rewrite `.git/index` through `.git/index.lock` (create, rename,
 *   unlink) to record fresh stat data; only that file, only inside the project's `.git`, only from a process that
 *   exec'd git. A ref, an object, a config or a hook written by git is a violation (`git branch newname` writes one).
 * - git reading its own `.git` (objects, refs, config), which is protected from everyone else, and ripgrep reading
 *   `.git/info/exclude` (git's ignore rules, which it honours).
 * - bash opening /etc/passwd once as it starts (to know its user); a second open in the same exec is the line's.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * The syscalls traced: program starts, process and thread creation (so a child or a thread is known to run its
 * parent's program), opens, and every call that creates, replaces or removes a name.
 */
export const TRACED = [
  'execve,clone,clone3,fork,vfork',
  'openat,open,creat,truncate',
  'rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat,link,linkat,symlink,symlinkat',
].join(',');

export interface Violation {
  kind: 'exec' | 'write' | 'read-outside' | 'read-protected' | 'canary' | 'marker' | 'timeout';
  detail: string;
}

export interface AuditContext {
  /** The project root of this run (real path). */
  root: string;
  /** The scratch HOME of this run (real path). */
  home: string;
  /** The names of the line's commands (the parser's list); `bash` (the runner) is always allowed. */
  programs: readonly string[];
  /** Path components protected inside the root, lower-case. */
  protect: readonly string[];
}

interface Call {
  name: string;
  args: string[];
  ret: string;
  /** The real path of the returned descriptor (`-y`), when there is one. */
  retPath?: string;
  /** The call failed for lack of permission. */
  denied: boolean;
}

/** Decodes a strace string argument (`"..."` with C escapes) to its bytes as UTF-8. */
function unquote(s: string): string {
  if (!s.startsWith('"')) return s;
  const body = s.endsWith('...') ? s.slice(1, -4) : s.slice(1, -1);
  const bytes: number[] = [];
  for (let i = 0; i < body.length; i += 1) {
    const ch = body[i]!;
    if (ch !== '\\') {
      bytes.push(...Buffer.from(ch, 'utf8'));
      continue;
    }
    const next = body[i + 1]!;
    const simple: Record<string, number> = { n: 10, t: 9, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
    if (next in simple) {
      bytes.push(simple[next]!);
      i += 1;
    } else if (next === 'x') {
      bytes.push(parseInt(body.slice(i + 2, i + 4), 16));
      i += 3;
    } else {
      const oct = /^[0-7]{1,3}/.exec(body.slice(i + 1))![0];
      bytes.push(parseInt(oct, 8));
      i += oct.length;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Reads a `<...>` annotation starting at `i` (nested `<...>` allowed); returns its text and the index after it. */
function annotation(line: string, i: number): [string, number] {
  let depth = 0;
  for (let j = i; j < line.length; j += 1) {
    if (line[j] === '<') depth += 1;
    else if (line[j] === '>' && --depth === 0) return [line.slice(i + 1, j).replace(/<[^<>]*>$/, ''), j + 1];
  }
  return [line.slice(i + 1), line.length];
}

/** One strace line as a call, or null (signals, exits, unfinished calls). */
export function parseCall(line: string): Call | null {
  const head = /^(\w+)\(/.exec(line);
  if (!head) return null;
  const args: string[] = [];
  let cur = '';
  let depth = 0;
  let i = head[0].length;
  for (; i < line.length; i += 1) {
    const ch = line[i]!;
    if (ch === '"') {
      let j = i + 1;
      while (j < line.length && line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
      if (line.startsWith('...', j + 1)) j += 3;
      cur += line.slice(i, j + 1);
      i = j;
    } else if (ch === '<' && /[\w)]$/.test(cur)) {
      const [text, next] = annotation(line, i);
      cur += `<${text}>`;
      i = next - 1;
    } else if ('([{'.includes(ch)) {
      depth += 1;
      cur += ch;
    } else if (')]}'.includes(ch) && depth > 0) {
      depth -= 1;
      cur += ch;
    } else if (ch === ')' && depth === 0) {
      break;
    } else if (ch === ',' && depth === 0) {
      args.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim() !== '') args.push(cur.trim());
  const rest = /^\) += (-?\d+|\?)/.exec(line.slice(i));
  if (!rest) return null;
  const after = i + rest[0].length;
  const retPath = line[after] === '<' ? annotation(line, after)[0] : undefined;
  const denied = / E(ACCES|PERM) /.test(line.slice(after));
  return { name: head[1]!, args, ret: rest[1]!, retPath, denied };
}

/** A path argument resolved: against its directory descriptor's path when strace printed one, else `cwd`. */
function pathOf(dirArg: string | undefined, pathArg: string, cwd: string): string {
  const p = unquote(pathArg);
  if (isAbsolute(p)) return p;
  const dir = dirArg ? /<(.*)>$/.exec(dirArg)?.[1] : undefined;
  return resolve(dir ?? cwd, p);
}

const inside = (p: string, dir: string): boolean => p === dir || p.startsWith(dir + sep);

/** Files a program opens by itself wherever it runs (module comment). */
export function systemFile(p: string, program: string, home: string): boolean {
  if (/^\/etc\/(passwd|group)$/.test(p)) return ['ls', 'stat', 'find', 'tree', 'git'].includes(program);
  // A script's interpreter reading the script it was started as (`which` is a shell script in Debian).
  if (/^\/(usr\/)?bin\//.test(p) && basename(p).startsWith(program) && program !== '(forked)') return true;
  if (['/dev/null', '/dev/tty', '/dev/urandom', '/proc/filesystems', '/proc/meminfo', '/proc/stat'].includes(p)) {
    return true;
  }
  if (/^\/(usr\/)?(lib|lib64)\//.test(p)) return true;
  if (/^\/usr\/share\/(locale|zoneinfo|misc\/magic|file\/)/.test(p)) return true;
  // Name resolution (git looks its host name up for an ident).
  if (/^\/etc\/(host\.conf|hosts|resolv\.conf|hostname|mailname|gai\.conf)$/.test(p)) return true;
  if (/^\/etc\/(ld\.so\.(cache|preload)|locale\.alias|localtime|nsswitch\.conf|gitconfig|magic(\.mgc)?)$/.test(p))
    return true;
  if (/^\/proc\/(self|\d+)\/(maps|status|mountinfo|stat|fd|limits|cgroup|cpuset)/.test(p)) return true;
  if (/^\/sys\/(devices\/system\/cpu|fs\/cgroup)\//.test(p)) return true;
  if (inside(p, join(home, '.gitconfig')) || inside(p, join(home, '.config', 'git'))) return true;
  return false;
}

/** git's index refresh: `.git/index` and `.git/index.lock` of the project, nothing else. */
const gitIndex = (p: string, root: string): boolean =>
  p === join(root, '.git', 'index') || p === join(root, '.git', 'index.lock');

/**
 * Reads under a protected folder a program makes by itself: git reading its own `.git`, and ripgrep reading
 * `.git/info/exclude` (it honours git's ignore rules; the file's contents are never printed).
 */
function ownBookkeeping(program: string, p: string, root: string): boolean {
  if (program === 'git') return inside(p, join(root, '.git'));
  return program === 'rg' && p === join(root, '.git', 'info', 'exclude');
}

const WRITE_FLAGS = /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND/;

/** Whether `p` is a directory now (opens of directories list names; they are not reads of contents). */
function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The protected component `p` (as written or resolved) holds inside the root, or undefined. */
function protectedComponent(p: string, ctx: AuditContext): string | undefined {
  if (!inside(p, ctx.root)) return undefined;
  return relative(ctx.root, p)
    .split(sep)
    .find((c) => ctx.protect.includes(c.toLowerCase()));
}

/** The calls of each process (`t.<pid>` files), and for each process the parent and the call that started it. */
function readLogs(dir: string) {
  const calls = new Map<number, Call[]>();
  for (const file of readdirSync(dir)) {
    const list: Call[] = [];
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const call = parseCall(line);
      if (call) list.push(call);
    }
    calls.set(Number(file.slice(file.lastIndexOf('.') + 1)), list);
  }
  const parent = new Map<number, { pid: number; at: number }>();
  for (const [pid, list] of calls) {
    list.forEach((c, at) => {
      if (/^(clone3?|v?fork)$/.test(c.name) && Number(c.ret) > 0) parent.set(Number(c.ret), { pid, at });
    });
  }
  return { calls, parent };
}

/** The violations in the logs `dir` holds (`strace -ff -o dir/t` wrote one `t.<pid>` per process or thread). */
export function auditTrace(dir: string, ctx: AuditContext): Violation[] {
  const out: Violation[] = [];
  const allowed = new Set(['bash', ...ctx.programs]);
  const { calls, parent } = readLogs(dir);
  // The program a process (or thread) runs at call `at`: the last program it exec'd before, else its parent's at the
  // clone (a shell's child doing a redirection before its exec is `bash`; a program's thread is that program).
  const programAt = (pid: number, at: number): string => {
    const list = calls.get(pid) ?? [];
    for (let i = Math.min(at, list.length) - 1; i >= 0; i -= 1) {
      if (list[i]!.name === 'execve' && list[i]!.ret === '0') return basename(unquote(list[i]!.args[0] ?? ''));
    }
    const p = parent.get(pid);
    return p ? programAt(p.pid, p.at) : '(runner)';
  };
  for (const [pid, list] of calls) {
    let program = programAt(pid, 0);
    // bash opens /etc/passwd once as it starts, to know its user; a second open is the line's own.
    let bashPasswd = 0;
    list.forEach((call, at) => {
      const { name, args } = call;
      if (name === 'execve') {
        if (call.ret !== '0') return;
        program = programAt(pid, at + 1);
        bashPasswd = 0;
        if (!allowed.has(program)) out.push({ kind: 'exec', detail: `${program} ran (${args.slice(1, 2).join('')})` });
        return;
      }
      const at2 = name.endsWith('at') || name === 'renameat2';
      const written: string[] = [];
      let readPath: string | undefined;
      if (name === 'open' || name === 'openat') {
        const path = pathOf(at2 ? args[0] : undefined, args[at2 ? 1 : 0]!, ctx.root);
        const flags = args[at2 ? 2 : 1] ?? '';
        if (WRITE_FLAGS.test(flags)) written.push(call.retPath ?? path);
        // A read refused for permission (the line runs as nobody) is still the line's attempt.
        else if ((Number(call.ret) >= 0 || call.denied) && !/O_DIRECTORY/.test(flags)) readPath = call.retPath ?? path;
        if (readPath && isDirectory(readPath)) readPath = undefined;
        if (readPath === '/etc/passwd' && program === 'bash' && (bashPasswd += 1) === 1) readPath = undefined;
        // The name as written too: a symlink named innocently inside the root may lead under a protected folder.
        const hit = protectedComponent(path, ctx);
        if (readPath && hit && !ownBookkeeping(program, path, ctx.root)) {
          out.push({ kind: 'read-protected', detail: `${program} read ${path} (${hit})` });
          readPath = undefined;
        }
      } else if (name === 'creat' || name === 'truncate' || name === 'unlink' || name === 'mkdir') {
        written.push(pathOf(undefined, args[0]!, ctx.root));
      } else if (name === 'unlinkat' || name === 'mkdirat') {
        written.push(pathOf(args[0], args[1]!, ctx.root));
      } else if (name === 'rename' || name === 'link' || name === 'symlink') {
        if (name !== 'symlink') written.push(pathOf(undefined, args[0]!, ctx.root));
        written.push(pathOf(undefined, args[1]!, ctx.root));
      } else if (name === 'renameat' || name === 'renameat2' || name === 'linkat') {
        written.push(pathOf(args[0], args[1]!, ctx.root), pathOf(args[2], args[3]!, ctx.root));
      } else if (name === 'symlinkat') {
        written.push(pathOf(args[1], args[2]!, ctx.root));
      }
      for (const p of written) {
        if (p === '/dev/null' || p === '/dev/tty') continue;
        if (program === 'git' && gitIndex(p, ctx.root)) continue;
        out.push({ kind: 'write', detail: `${program} ${name} ${p} (= ${call.ret})` });
      }
      if (readPath === undefined) return;
      if (!inside(readPath, ctx.root)) {
        if (!systemFile(readPath, program, ctx.home)) {
          out.push({ kind: 'read-outside', detail: `${program} read ${readPath}` });
        }
        return;
      }
      const hit = protectedComponent(readPath, ctx);
      if (hit && !ownBookkeeping(program, readPath, ctx.root)) {
        out.push({ kind: 'read-protected', detail: `${program} read ${readPath} (${hit})` });
      }
    });
  }
  return out;
}
