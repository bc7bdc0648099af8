/**
 * What the policy makes of a parsed shell line before any proposal: refused at once when a deny rule holds anywhere
 * in it (`rm -rf`, `sudo`, a pipe into an interpreter), run at once when it reduces to allowlisted commands whose
 * path arguments and redirections stay inside the hook roots, otherwise judged (a `shell_command` proposal). Pure but
 * for the filesystem look-ups path confinement needs (symlinks are followed).
 */
import { basename, isAbsolute } from 'node:path';
import { globMatches } from '../../contracts/mcp';
import type { HookShellSettings, ShellAllow } from '../../contracts/hooks';
import type { ParsedShell, SimpleCommand } from './parse';
import { gitConfigProblem } from './git-config';
import { pathVerdict, type PathContext } from '../paths';

export type ShellVerdict =
  | { kind: 'allow'; rule: string }
  | { kind: 'deny'; rule: string; reason: string }
  | { kind: 'judge'; why: string };

/** True when `arg` is (or bundles) the flag `flag`: `-rf` holds `-r` and `-f`; long flags match exactly or `=...`. */
function hasFlag(arg: string, flag: string): boolean {
  if (flag.startsWith('--')) return arg === flag || arg.startsWith(`${flag}=`);
  if (/^-[A-Za-z0-9]$/.test(flag) && /^-[A-Za-z0-9]+$/.test(arg)) return arg.slice(1).includes(flag[1]!);
  return arg === flag;
}

/** One `a|b|c` alternative group of a deny rule held by some argument. */
function holds(args: readonly string[], group: string): boolean {
  const alternatives = group.split('|');
  return args.some((a) => alternatives.some((alt) => hasFlag(a, alt)));
}

/** The first deny finding for one command, or null. */
function denied(cmd: SimpleCommand, shell: HookShellSettings): { rule: string; reason: string } | null {
  const program = basename(cmd.argv[0] ?? '');
  const args = cmd.argv.slice(1);
  for (const rule of shell.deny) {
    if (!globMatches(rule.command, program)) continue;
    if (rule.anyArg && !rule.anyArg.some((g) => holds(args, g))) continue;
    if (rule.allArgs && !rule.allArgs.every((g) => holds(args, g))) continue;
    return { rule: rule.name, reason: `${rule.reason} (${JSON.stringify(cmd.argv.join(' ').slice(0, 200))})` };
  }
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

/** Why this command is not allowlisted, or null when it is. */
function notAllowed(cmd: SimpleCommand, shell: HookShellSettings, where: PathContext): string | null {
  const [program, sub] = cmd.argv;
  if (!cmd.literal) return 'a word of the command expands';
  if (cmd.assignments > 0) return 'the command sets variables';
  if (cmd.nested) return 'the command is nested';
  if (!program || program.includes('/')) return `${JSON.stringify(program ?? '')} is not a bare program name`;
  const entry: ShellAllow | undefined = shell.allow.find((e) => e.command === program);
  if (!entry) return `${program} is not on spec.hooks.shell.allow`;
  if (program === 'git') {
    const why = gitConfigProblem(where.cwd);
    if (why) return why;
  }
  if (entry.subcommands && (sub === undefined || !entry.subcommands.includes(sub))) {
    return `${program} ${JSON.stringify(sub ?? '')} is not an allowed subcommand`;
  }
  for (const arg of cmd.argv.slice(entry.subcommands ? 2 : 1)) {
    if (arg.startsWith('-') && arg !== '-' && arg !== '--') {
      if (entry.options && !optionAllowed(arg, entry.options)) return `option ${JSON.stringify(arg)} is not allowed`;
    } else if (entry.pathArgs && arg !== '--' && arg !== '-') {
      const v = pathVerdict(arg, where);
      if (v.kind !== 'inside') return `argument ${JSON.stringify(arg)} ${v.why}`;
    }
  }
  for (const r of cmd.redirects) {
    const why = redirectProblem(r, where);
    if (why) return why;
  }
  return null;
}

/** Reading a file inside the roots, duplicating a descriptor, or writing to /dev/null; anything else is judged. */
function redirectProblem(r: { op: string; target: string }, where: PathContext): string | null {
  if (r.op === '<<' || r.op === '<<<') return null;
  if ((r.op === '>&' || r.op === '<&') && /^(\d+|-)$/.test(r.target)) return null;
  if (r.op === '<') {
    const v = pathVerdict(r.target, where);
    return v.kind === 'inside' ? null : `input ${JSON.stringify(r.target)} ${v.why}`;
  }
  if (r.target === '/dev/null' && isAbsolute(r.target)) return null;
  return `the command writes ${JSON.stringify(r.target)} (${r.op})`;
}

/**
 * The policy's verdict on a parsed line: deny rules first (anywhere in the line), then the allowlist (only for a
 * reducible line, every command on it), else the judge.
 */
export function shellVerdict(parsed: ParsedShell, shell: HookShellSettings, where: PathContext): ShellVerdict {
  for (const cmd of parsed.commands) {
    const d = denied(cmd, shell);
    if (d) return { kind: 'deny', ...d };
  }
  if (!parsed.reducible) return { kind: 'judge', why: parsed.why ?? 'the line does not reduce to simple commands' };
  for (const cmd of parsed.commands) {
    const why = notAllowed(cmd, shell, where);
    if (why) return { kind: 'judge', why };
  }
  return { kind: 'allow', rule: 'shell.allow' };
}
