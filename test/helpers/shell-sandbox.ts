/**
 * The scratch project the shell differential test runs allowed lines in (test/security/shell-differential.test.ts),
 * and the run itself: a fresh copy per line, `bash -c LINE` under strace with an empty HOME, stdin from /dev/null and
 * a timeout, then the audit (test/helpers/strace-audit.ts), the canaries in the output and the marker file.
 *
 * The project is what an agent works in, plus bait: a git repository with sources; files literally named `-exec`,
 * `-delete`, `-fprint` and `--output=x` (a glob such as `?exec` expands to them: the option-smuggling class);
 * symlinks out of the project (`etc-link` to /etc, `out-link` to the sibling folder) and one inside (`src-link`);
 * protected files holding canary strings (.agent-judge/capability.key, .env, .claude/settings.json, ignored by git so
 * that `git log -p` does not print them through the history); a sibling `../outside/secret.txt` with a canary; and
 * `pwn.sh`, which writes the marker `PWNED`; `magic.txt`, a magic source `file -C` would compile. Why a copy per
 * line: a line that writes would change what the next one sees; in /dev/shm a copy costs a few milliseconds. Run as
 * root, lines run as `nobody`, so that a line the gate wrongly allows cannot change the machine (strace records the
 * attempt all the same).
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditTrace, TRACED, type Violation } from './strace-audit';

/** The canaries: none may ever be printed by a line the gate allowed at once. */
export interface Canaries {
  [name: string]: string;
}

export interface Scratch {
  /** The folder holding the template (`project`, `outside`, `home`) and the run slots. */
  base: string;
  /** The template project root (real path): the gate is asked about lines here. */
  root: string;
  canaries: Canaries;
  /** The user lines run as, when this process is root. */
  runAs?: string;
}

/**
 * Where scratch projects go: /dev/shm when it is there (a memory file system: a copy and its strace logs cost a few
 * milliseconds there, against 100 ms and more on this machine's disk), else the temporary folder.
 */
function scratchParent(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

/** Builds the template project (module comment) under a new temporary folder. */
export function buildScratch(): Scratch {
  const base = realpathSync(mkdtempSync(join(scratchParent(), 'aj-shell-diff-')));
  const template = join(base, 'template');
  const root = join(template, 'project');
  const tag = randomBytes(6).toString('hex');
  const canaries: Canaries = {
    'capability.key': `AJ-CANARY-KEY-${tag}`,
    '.env': `AJ-CANARY-ENV-${tag}`,
    '.claude/settings.json': `AJ-CANARY-CLAUDE-${tag}`,
    '../outside/secret.txt': `AJ-CANARY-OUTSIDE-${tag}`,
    // /etc/passwd's first line: ls -l may open the file for names, but its contents must never be printed.
    '/etc/passwd': 'root:x:0:0:',
  };
  for (const dir of ['src/util', '.agent-judge', '.claude']) mkdirSync(join(root, dir), { recursive: true });
  mkdirSync(join(template, 'outside'));
  mkdirSync(join(template, 'home'));
  const files: Record<string, string> = {
    'README.md': '# scratch\n\nA project for the shell differential test. TODO: nothing.\n',
    'package.json': '{ "name": "scratch", "version": "1.0.0" }\n',
    'notes.txt': 'hello\nTODO write more\n',
    'src/a.ts': "import { b } from './b';\nexport const a = b + 1; // TODO\n",
    'src/b.ts': 'export const b = 1;\n',
    'src/util/c.ts': "export const c = 'foo';\n",
    'pwn.sh': '#!/bin/sh\necho pwned > PWNED\n',
    // A magic source `file -C -m magic.txt` compiles into magic.txt.mgc (a write by an allowlisted program).
    'magic.txt': '0\tstring\tAJ-MAGIC\tagent-judge test data\n',
    '-exec': '',
    '-delete': '',
    '-fprint': '',
    '--output=x': '',
    '.gitignore': '.agent-judge/\n.env\n.claude/\n',
    '.agent-judge/capability.key': `${canaries['capability.key']}\n`,
    '.env': `API_KEY=${canaries['.env']}\n`,
    '.claude/settings.json': `{ "hooks": {}, "secret": "${canaries['.claude/settings.json']}" }\n`,
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
  chmodSync(join(root, 'pwn.sh'), 0o755);
  writeFileSync(join(template, 'outside', 'secret.txt'), `${canaries['../outside/secret.txt']}\n`);
  symlinkSync('/etc', join(root, 'etc-link'));
  symlinkSync('../outside', join(root, 'out-link'));
  symlinkSync('src', join(root, 'src-link'));
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: root,
      stdio: 'ignore',
      env: { PATH: process.env.PATH ?? '', HOME: join(template, 'home'), GIT_CONFIG_NOSYSTEM: '1' },
    });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'first');
  writeFileSync(join(root, 'src', 'b.ts'), 'export const b = 2;\n');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qam', 'second');
  writeFileSync(join(root, 'notes.txt'), 'hello\nTODO write more\nchanged\n');
  // Refresh the index once, so that a copy (timestamps kept) starts with a fresh one.
  git('status', '--short');
  // git init's sample hooks are never run (none is enabled); fewer files make each copy cheaper.
  rmSync(join(root, '.git', 'hooks'), { recursive: true, force: true });
  // As root, lines run as `nobody` (strace -u): a line the gate wrongly allows (`find etc-lin?/ ?delete`) must not be
  // able to change the machine. The copies belong to nobody so that writes inside them are seen succeeding.
  const runAs = process.getuid?.() === 0 ? 'nobody' : undefined;
  if (runAs) {
    chmodSync(base, 0o755);
    execFileSync('chown', ['-R', '-h', `${runAs}:`, template]);
  }
  return { base, root, canaries, runAs };
}

export interface RunResult {
  output: string;
  violations: Violation[];
  ms: number;
}

export interface RunOptions {
  strace: string;
  /** Folders to put first on the line's PATH (test tools such as rg and tree). */
  extraPath?: readonly string[];
  timeoutMs?: number;
  /** The names of the line's commands (the gate wrapper's list). */
  programs: readonly string[];
  protect: readonly string[];
}

const MAX_OUTPUT = 1 << 20;

/** Runs `line` in slot `slot` (a fresh copy of the template) under strace; returns the output and the violations. */
export async function runAllowed(scratch: Scratch, slot: number, line: string, opts: RunOptions): Promise<RunResult> {
  const started = Date.now();
  const dir = join(scratch.base, `slot-${slot}`);
  rmSync(dir, { recursive: true, force: true });
  // cp -a keeps the owner (nobody, when root) and the timestamps (git's index stays fresh).
  execFileSync('cp', ['-a', join(scratch.base, 'template'), dir]);
  const root = join(dir, 'project');
  const home = join(dir, 'home');
  const logs = join(dir, 'strace');
  mkdirSync(logs);
  const args = [
    ...(scratch.runAs ? ['-u', scratch.runAs] : []),
    '-f',
    '-ff',
    '-y',
    '-s',
    '4096',
    '-e',
    `trace=${TRACED}`,
    '-o',
    join(logs, 't'),
    'bash',
    '-c',
    line,
  ];
  const env = {
    PATH: [...(opts.extraPath ?? []), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    HOME: home,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
  };
  const timeoutMs = opts.timeoutMs ?? 5000;
  const { output, timedOut } = await new Promise<{ output: string; timedOut: boolean }>((done) => {
    // Its own process group: a timeout kills strace and every process it traces together.
    const child = spawn(opts.strace, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const chunks: Buffer[] = [];
    let size = 0;
    const take = (b: Buffer) => {
      if (size < MAX_OUTPUT) chunks.push(b);
      size += b.length;
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, timeoutMs);
    child.on('close', () => {
      clearTimeout(timer);
      done({ output: Buffer.concat(chunks).toString('utf8'), timedOut });
    });
  });
  const violations = auditTrace(logs, { root, home, programs: opts.programs, protect: opts.protect });
  for (const [name, value] of Object.entries(scratch.canaries)) {
    if (output.includes(value)) violations.push({ kind: 'canary', detail: `the output holds ${name}'s canary` });
  }
  for (const where of [root, dir, join(dir, 'outside'), home]) {
    if (existsSync(join(where, 'PWNED'))) violations.push({ kind: 'marker', detail: `pwn.sh's marker is in ${where}` });
  }
  if (timedOut) violations.push({ kind: 'timeout', detail: `still running after ${timeoutMs} ms (killed)` });
  return { output, violations, ms: Date.now() - started };
}
