/**
 * The hooks layer's completion of what a runtime's rules made of a call (the gate's `refine`): the working directory
 * and a parsed shell line for `shell_command`, resolved and confined paths for `file_edit`, and the protected-path
 * check for read tools. A deny rule or a path outside the roots refuses the call before any proposal; an allowlisted
 * shell line runs at once (no-judge) unless the call carries input its rule does not map. What the deny patterns
 * alone must not approve is retyped to be judged: a change to a file that names programs (`program_config_edit`), a
 * request to a private or IP-literal host (`web_request_sensitive`), each with `parameters.why_judged`.
 */
import { resolve } from 'node:path';
import { carriesUnmappedInput, unmappable, type CallMapping } from './mapping';
import type { GateToolCall } from './types';
import {
  DEFAULT_RUNS_PROGRAMS,
  FILE_EDIT,
  PROGRAM_CONFIG_EDIT,
  SHELL_COMMAND,
  WEB_REQUEST,
  WEB_REQUEST_SENSITIVE,
  type HookShellSettings,
} from '../contracts/hooks';
import type { CompliancePolicy, PatternRuleSchema } from '../contracts/policy';
import { refusal } from '../contracts/refusal';
import type { z } from 'zod';
import { parseShell } from './shell/parse';
import { shellVerdict } from './shell/rules';
import {
  optionNamedComponent,
  pathVerdict,
  realRoots,
  repositoryShapeOf,
  runsProgramsGlob,
  type PathContext,
  type PathVerdict,
} from './paths';
import { textConcerns, urlConcerns } from './web';

/** What the completion needs: the policy's hook settings, resolved roots, the deny patterns. */
export interface CompletionContext {
  shell: HookShellSettings;
  /** Real absolute roots. */
  roots: readonly string[];
  /** Protected components, lowercase. */
  protect: readonly string[];
  /** `spec.lightweight.deny`: a line that matches one is never run without a proposal. */
  denyPatterns: ReadonlyArray<z.infer<typeof PatternRuleSchema>>;
  /**
   * `spec.hooks.files.runsPrograms`: a change to a file one of these globs names is a `program_config_edit`.
   * Default {@link DEFAULT_RUNS_PROGRAMS}, so a caller that names none still judges them.
   */
  runsPrograms?: readonly string[];
}

/** The completion context a policy makes for hooks, paths resolved against `baseDir` (the gate's and a replay's). */
export function completionContextOf(policy: CompliancePolicy, baseDir: string): CompletionContext {
  const h = policy.spec.hooks;
  return {
    shell: h.shell,
    roots: realRoots(h.files.roots, baseDir),
    protect: h.files.protect.map((p) => p.toLowerCase()),
    runsPrograms: h.files.runsPrograms,
    denyPatterns: policy.spec.lightweight.deny,
  };
}

/** Arguments that name a file or directory a read tool opens (Claude Code, Gemini CLI). */
const PATH_ARGUMENTS = ['file_path', 'notebook_path', 'path', 'dir_path', 'absolute_path'];

/** Refused by one of the hooks' own rules, before any proposal: `REJECT (<rule>): <why>`, the rule its code. */
function rejected(mapping: CallMapping, rule: string, why: string): CallMapping {
  return { kind: 'refused', rule: mapping.rule, refusal: refusal(rule, `REJECT (${rule}): ${why}`) };
}

/** The directory a shell tool runs in: the tool's own argument (Gemini's `dir_path`), else the session's. */
function shellDirectory(call: GateToolCall): string {
  const cwd = call.cwd ?? process.cwd();
  const own = call.arguments.dir_path ?? call.arguments.workdir ?? call.arguments.directory;
  return typeof own === 'string' && own.length > 0 ? resolve(cwd, own) : cwd;
}

/** The files an apply_patch body touches (`*** Add File:`, `*** Update File:`, `*** Delete File:`, `*** Move to:`). */
export function patchPaths(patch: string): string[] {
  const paths: string[] = [];
  for (const line of patch.split(/\r?\n/)) {
    const m = /^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$/.exec(line);
    if (m) paths.push(m[1]!.trim());
  }
  return [...new Set(paths)];
}

/** The gate's `refine` for one runtime's calls (see the module comment). */
export async function completeHookCall(
  mapping: CallMapping,
  call: GateToolCall,
  ctx: CompletionContext,
): Promise<CallMapping> {
  const where = (cwd: string): PathContext => ({ cwd, roots: ctx.roots, protect: ctx.protect });
  const cwd = call.cwd ?? process.cwd();
  if (mapping.kind === 'no-judge') {
    for (const key of PATH_ARGUMENTS) {
      const p = call.arguments[key];
      if (typeof p !== 'string' || p === '') continue;
      const v = pathVerdict(p, where(cwd));
      if (v.kind === 'protected' || v.kind === 'refused') {
        return rejected(mapping, ruleOf(v), `${JSON.stringify(p)} ${v.why}`);
      }
    }
    return mapping;
  }
  if (mapping.kind !== 'judged') return mapping;

  if (mapping.actionType === SHELL_COMMAND) {
    const command = mapping.parameters.command;
    if (typeof command !== 'string' || command.trim() === '') {
      return unmappable(mapping.rule, 'the shell call has no command');
    }
    const dir = shellDirectory(call);
    const parsed = await parseShell(command);
    const verdict = shellVerdict(parsed, ctx.shell, where(dir));
    if (verdict.kind === 'deny') {
      return rejected(mapping, verdict.rule, verdict.reason);
    }
    // Input the rule does not map (Claude Code's dangerouslyDisableSandbox, run_in_background) is judged with the line.
    if (verdict.kind === 'allow' && !carriesUnmappedInput(mapping)) {
      const pattern = ctx.denyPatterns.find((r) => new RegExp(r.pattern, 'iu').test(command));
      // An allowlisted line that matches a deny pattern (a secret on the command line) is judged, so the REJECT is
      // recorded with the pattern's name.
      if (!pattern) return { kind: 'no-judge', rule: { name: `${mapping.rule.name}+${verdict.rule}`, rule: null } };
    }
    return {
      ...mapping,
      target: { ...mapping.target, cwd: dir },
      parameters: {
        ...mapping.parameters,
        command,
        parsed: {
          reducible: parsed.reducible,
          commands: parsed.commands.map((c) => ({ argv: c.argv, redirects: c.redirects })),
          ...(parsed.why !== undefined ? { why: parsed.why.slice(0, 512) } : {}),
        },
      },
    };
  }

  if (mapping.actionType === FILE_EDIT || mapping.actionType === PROGRAM_CONFIG_EDIT) {
    const written = Array.isArray(mapping.target.paths) ? (mapping.target.paths as unknown[]) : [];
    const patch = mapping.parameters.patch;
    const paths = written.length > 0 ? written : typeof patch === 'string' ? patchPaths(patch) : [];
    if (paths.length === 0) return unmappable(mapping.rule, 'the change names no file');
    const real: string[] = [];
    const runs: string[] = [];
    for (const p of paths) {
      if (typeof p !== 'string') return unmappable(mapping.rule, 'a path is not a string');
      const v = pathVerdict(p, where(cwd));
      if (v.kind !== 'inside') return rejected(mapping, ruleOf(v), `${JSON.stringify(p)} ${v.why}`);
      const option = optionNamedComponent(p, where(cwd), v.real);
      if (option !== null) {
        return rejected(
          mapping,
          'files.option-name',
          `${JSON.stringify(p)} names ${JSON.stringify(option)}: ` +
            'a file named like an option turns a later glob into an option',
        );
      }
      const shaped = repositoryShapeOf(p, where(cwd), v.real);
      if (shaped !== null) {
        return rejected(
          mapping,
          'files.repository-shape',
          `${JSON.stringify(p)} would give a folder a git repository's shape (${shaped})`,
        );
      }
      const glob = runsProgramsGlob(p, where(cwd), v.real, ctx.runsPrograms ?? DEFAULT_RUNS_PROGRAMS);
      if (glob !== null) runs.push(`${p} matches ${glob}`);
      real.push(v.real);
    }
    const edit = {
      ...mapping,
      target: { ...mapping.target, paths: [...new Set(real)] },
      parameters: { ...mapping.parameters, ...editsOf(mapping.parameters.edits) },
    };
    if (runs.length === 0) return edit;
    // A file that names programs to run later is judged: the deny patterns cannot tell a new hook from a harmless one.
    return {
      ...edit,
      actionType: PROGRAM_CONFIG_EDIT,
      parameters: { ...edit.parameters, why_judged: judged('names programs to run later (files.runsPrograms)', runs) },
    };
  }
  if (mapping.actionType === WEB_REQUEST || mapping.actionType === WEB_REQUEST_SENSITIVE) return webRequest(mapping);
  return mapping;
}

/** The rule a path refusal names: its own, `files.protect` or `files.roots`. */
function ruleOf(v: Exclude<PathVerdict, { kind: 'inside' }>): string {
  return v.kind === 'refused' ? v.rule : v.kind === 'protected' ? 'files.protect' : 'files.roots';
}

/** `why_judged`: what made the call judged, then the findings, bounded to the proposal's field. */
function judged(what: string, findings: readonly string[]): string {
  const text = `${what}: ${findings.join('; ')}`;
  return text.length > 1024 ? `${text.slice(0, 1023)}…` : text;
}

/**
 * A network read whose URL or text reaches a private, loopback or IP-literal host, another scheme, or carries a long
 * encoded run (src/gate/web.ts) is a `web_request_sensitive`: judged, never approved by the deny patterns alone.
 */
function webRequest(mapping: Extract<CallMapping, { kind: 'judged' }>): CallMapping {
  // What leaves the machine: the URL, or the query (Gemini CLI's web_fetch puts its URLs in the prompt it maps there).
  // Claude Code's WebFetch prompt stays with the runtime's own model and is not checked.
  const { url, query } = mapping.target;
  const findings = [
    ...(typeof url === 'string' ? urlConcerns(url).map((r) => `${url.slice(0, 200)} ${r}`) : []),
    ...(typeof query === 'string' ? textConcerns(query).map((r) => `the query ${r}`) : []),
  ];
  if (findings.length === 0) return mapping;
  return {
    ...mapping,
    actionType: WEB_REQUEST_SENSITIVE,
    parameters: { ...mapping.parameters, why_judged: judged('not for patterns alone', [...new Set(findings)]) },
  };
}

/**
 * Replacements in the proposal's spelling (`old_string` / `new_string`): OpenClaw's `edit` tool spells them
 * `oldText` / `newText`. Anything else is left as the rule made it (the proposal schema then checks it).
 */
function editsOf(edits: unknown): { edits?: unknown } {
  if (!Array.isArray(edits)) return {};
  return {
    edits: edits.map((e: unknown) => {
      if (e === null || typeof e !== 'object') return e;
      const { oldText, newText, ...rest } = e as Record<string, unknown>;
      if (oldText === undefined && newText === undefined) return e;
      return { ...rest, old_string: oldText, new_string: newText };
    }),
  };
}
