/**
 * What the policy makes of a parsed shell line before any proposal: refused at once when a deny rule holds anywhere
 * in it (`rm -rf`, `sudo`, a pipe into an interpreter; seen through wrappers such as `env`, `nice`, `xargs`), run at
 * once only when it is provably harmless (a reducible line of allowlisted programs with allowlisted options, every
 * operand confined to the roots and off files.protect, every directory such a program walks free of protected names,
 * no redirection writing anywhere but /dev/null, the working directory inside the roots), otherwise judged (a
 * `shell_command` proposal). Pure but for the filesystem look-ups path confinement needs (symlinks are followed).
 */
import { basename, isAbsolute } from 'node:path';
import { globMatches } from '../../contracts/mcp';
import type { HookShellSettings, ShellAllow } from '../../contracts/hooks';
import type { ParsedShell, SimpleCommand } from './parse';
import { gitConfigProblem } from './git-config';
import { pathVerdict, type PathContext } from '../paths';
import { walkProblem } from './walk';

export type ShellVerdict =
  | { kind: 'allow'; rule: string }
  | { kind: 'deny'; rule: string; reason: string }
  | { kind: 'judge'; why: string };

/** How many wrappers deep (`nice env timeout 5 rm ...`) deny rules look. */
const MAX_WRAPPER_DEPTH = 4;

/**
 * True when `arg` is (or bundles) the flag `flag`: `-rf` holds `-r` and `-f`; a long flag matches itself, `flag=...`,
 * and any abbreviation of at least three characters (`--rec` is `--recursive` to getopt_long).
 */
function hasFlag(arg: string, flag: string): boolean {
  if (flag.startsWith('--')) {
    const name = arg.split('=', 1)[0]!;
    return name === flag || (name.length >= 3 && name.startsWith('--') && flag.startsWith(name));
  }
  if (/^-[A-Za-z0-9]$/.test(flag) && /^-[A-Za-z0-9]+$/.test(arg)) return arg.slice(1).includes(flag[1]!);
  return arg === flag;
}

/** One `a|b|c` alternative group of a deny rule held by some argument. */
function holds(args: readonly string[], group: string): boolean {
  const alternatives = group.split('|');
  return args.some((a) => alternatives.some((alt) => hasFlag(a, alt)));
}

/** The first deny rule `argv` meets as written. */
function deniedArgv(argv: readonly string[], shell: HookShellSettings): { rule: string; reason: string } | null {
  const program = basename(argv[0] ?? '');
  const args = argv.slice(1);
  for (const rule of shell.deny) {
    if (!globMatches(rule.command, program)) continue;
    if (rule.anyArg && !rule.anyArg.some((g) => holds(args, g))) continue;
    if (rule.allArgs && !rule.allArgs.every((g) => holds(args, g))) continue;
    return { rule: rule.name, reason: `${rule.reason} (${JSON.stringify(argv.join(' ').slice(0, 200))})` };
  }
  return null;
}

/**
 * The deny rule `argv` meets as written or through its wrappers: for a wrapper (`env`, `nice`, `timeout`, `xargs`...),
 * every later word that is not an option or an assignment may start the command it runs, so each such tail is
 * checked as a command of its own (over-reading a wrapper's option value as a program only ever refuses more).
 */
function deniedThroughWrappers(
  argv: readonly string[],
  shell: HookShellSettings,
  depth = 0,
): { rule: string; reason: string } | null {
  const direct = deniedArgv(argv, shell);
  if (direct || depth >= MAX_WRAPPER_DEPTH) return direct;
  if (!shell.wrappers.includes(basename(argv[0] ?? ''))) return null;
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i]!;
    if (word.startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) continue;
    const inner = deniedThroughWrappers(argv.slice(i), shell, depth + 1);
    if (inner) return inner;
  }
  return null;
}

/** The first deny finding for one command, or null. */
function denied(cmd: SimpleCommand, shell: HookShellSettings): { rule: string; reason: string } | null {
  const found = deniedThroughWrappers(cmd.argv, shell);
  if (found) return found;
  const program = basename(cmd.argv[0] ?? '');
  if (cmd.piped && shell.interpreters.includes(program)) {
    return {
      rule: 'shell.pipe-to-interpreter',
      reason: `another command's output is piped into ${program}, which runs it as code`,
    };
  }
  return null;
}

function optionAllowed(arg: string, allowed: readonly string[]): boolean {
  return allowed.some((o) => (o.endsWith('=*') ? arg.startsWith(o.slice(0, -1)) : arg === o));
}

/** The allowlist entry for this command: its program, and its subcommand when the entry lists subcommands. */
function entryFor(shell: HookShellSettings, program: string, sub: string | undefined): ShellAllow | undefined {
  return shell.allow.find(
    (e) => e.command === program && (!e.subcommands || (sub !== undefined && e.subcommands.includes(sub))),
  );
}

/** Whether this command walks its directory operands (rg always, grep with -r...). */
function walks(entry: ShellAllow, args: readonly string[]): boolean {
  if (entry.walks) return true;
  return (entry.walksWith ?? []).some((w) => args.some((a) => hasFlag(a, w)));
}

/** Why this command is not allowlisted, or null when it is. */
function notAllowed(cmd: SimpleCommand, shell: HookShellSettings, where: PathContext): string | null {
  const [program, sub] = cmd.argv;
  if (!cmd.literal) return 'a word of the command is not literal';
  if (cmd.assignments > 0) return 'the command sets variables';
  if (cmd.nested) return 'the command is nested';
  if (!program || program.includes('/')) return `${JSON.stringify(program ?? '')} is not a bare program name`;
  const entry = entryFor(shell, program, sub);
  if (!entry) {
    const listed = shell.allow.some((e) => e.command === program);
    if (!listed) return `${program} is not on spec.hooks.shell.allow`;
    return `${program} ${JSON.stringify(sub ?? '')} is not an allowed subcommand`;
  }
  if (program === 'git') {
    const why = gitConfigProblem(where.cwd);
    if (why) return why;
  }
  const args = cmd.argv.slice(entry.subcommands ? 2 : 1);
  const operands: string[] = [];
  let afterDashes = false;
  for (const arg of args) {
    if (afterDashes) {
      operands.push(arg); // git: everything after `--` is a path, whatever it starts with
    } else if (arg === '--') {
      // Only git's `--` is read here (revisions before, paths after). For grep or find it would turn the next word
      // into a pattern or an expression this reading cannot follow: judged.
      if (!entry.subcommands) return `${program} with \`--\` is judged`;
      afterDashes = true;
    } else if (arg.startsWith('-') && arg !== '-') {
      if (!optionAllowed(arg, entry.options ?? [])) return `option ${JSON.stringify(arg)} is not allowed`;
    } else if (arg !== '-') {
      operands.push(arg);
    }
  }
  const paths = operandPaths(entry, operands);
  if (paths === null) return `${program}${entry.subcommands ? ` ${sub}` : ''} takes no operand here`;
  for (const p of paths) {
    const v = pathVerdict(p, where);
    if (v.kind !== 'inside') return `argument ${JSON.stringify(p)} ${v.why}`;
  }
  if (walks(entry, args)) {
    // What the program reads is every file below each directory it is given (the working directory without one).
    const dirs = paths.length > 0 ? paths : ['.'];
    for (const d of dirs) {
      const why = walkProblem(d, where);
      if (why) return `${program} reads every file under ${JSON.stringify(d)}, and ${why}`;
    }
  }
  for (const r of cmd.redirects) {
    const why = redirectProblem(r, where);
    if (why) return why;
  }
  return null;
}

/** The operands that must be confined as paths, or null when the entry takes none and some were given. */
function operandPaths(entry: ShellAllow, operands: readonly string[]): string[] | null {
  switch (entry.operands) {
    case 'text':
      return [];
    case 'none':
      return operands.length > 0 ? null : [];
    case 'pattern-then-paths':
      return operands.slice(1);
    case 'paths':
      return [...operands];
  }
}

/** Reading a file inside the roots, duplicating a descriptor, or writing to /dev/null; anything else is judged. */
function redirectProblem(r: { op: string; target: string }, where: PathContext): string | null {
  if (r.op === '<<') return null; // a heredoc: parse.ts reduced it only when its body is literal
  if ((r.op === '>&' || r.op === '<&') && /^(\d+|-)$/.test(r.target)) return null;
  if (r.op === '<') {
    const v = pathVerdict(r.target, where);
    return v.kind === 'inside' ? null : `input ${JSON.stringify(r.target)} ${v.why}`;
  }
  if (r.target === '/dev/null' && isAbsolute(r.target) && /^(?:&?>>?|>\||>&|<>)$/.test(r.op)) return null;
  return `the command writes ${JSON.stringify(r.target)} (${r.op})`;
}

/**
 * The policy's verdict on a parsed line: deny rules first (anywhere in the line, through wrappers), then the
 * allowlist (only for a reducible line run from inside the roots, every command on it), else the judge.
 */
export function shellVerdict(parsed: ParsedShell, shell: HookShellSettings, where: PathContext): ShellVerdict {
  for (const cmd of parsed.commands) {
    const d = denied(cmd, shell);
    if (d) return { kind: 'deny', ...d };
  }
  if (!parsed.reducible) return { kind: 'judge', why: parsed.why ?? 'the line does not reduce to simple commands' };
  // A command with no operand acts on its working directory (`ls`, `git status`, `grep -r x`): it must be inside.
  const cwd = pathVerdict(where.cwd, where);
  if (cwd.kind !== 'inside') return { kind: 'judge', why: `the working directory ${where.cwd} ${cwd.why}` };
  for (const cmd of parsed.commands) {
    const why = notAllowed(cmd, shell, where);
    if (why) return { kind: 'judge', why };
  }
  return { kind: 'allow', rule: 'shell.allow' };
}
