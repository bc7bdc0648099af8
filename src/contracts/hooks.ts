/**
 * `spec.hooks`: how a coding agent's built-in tools (Claude Code, Codex, Gemini CLI) are judged through their
 * pre-tool hooks (docs/hooks.md). One rule set per runtime, of the same shape as `spec.mcp.rules` (first match on
 * the tool's name: `tier: no-judge` or an action type with target and parameters read from the tool's input); shell
 * commands and file changes are completed by the hooks layer (src/hooks/) before they become proposals: commands are
 * parsed, file paths resolved and confined. The resident gate (`agent-judge gate`, inside `agent-judge dev`) serves
 * the hooks on loopback, one bearer token per agent.
 */
import { z } from 'zod';
import { McpHttpAgentSchema, McpRuleSchema } from './mcp';

/** The runtimes agent-judge has hook adapters for. */
export const HOOK_RUNTIMES = ['claude-code', 'codex', 'gemini'] as const;
export type HookRuntime = (typeof HOOK_RUNTIMES)[number];

/** True when `name` is one of {@link HOOK_RUNTIMES}. */
export function isHookRuntime(name: string): name is HookRuntime {
  return (HOOK_RUNTIMES as readonly string[]).includes(name);
}

/**
 * The runtimes the resident gate answers (`POST /hooks/<runtime>`): the command-hook runtimes and OpenClaw, whose
 * plugin (openclaw/, docs/openclaw.md) runs inside the OpenClaw gateway and calls the gate itself, with no command
 * hook of its own.
 */
export const GATE_RUNTIMES = [...HOOK_RUNTIMES, 'openclaw'] as const;
export type GateRuntime = (typeof GATE_RUNTIMES)[number];

/** True when `name` is one of {@link GATE_RUNTIMES}. */
export function isGateRuntime(name: string): name is GateRuntime {
  return (GATE_RUNTIMES as readonly string[]).includes(name);
}

const Duration = z.union([
  z.int().positive(),
  z.string().regex(/^\d+(\.\d+)?\s*(ms|s|m|h|d)$/, 'expected a duration such as 30s, 5m, 1h or 7d'),
]);

/** One runtime's rules: first match on the tool's name (the `server` glob matches the tool family `builtin`). */
export const HookRuntimeSettingsSchema = z
  .strictObject({ rules: z.array(McpRuleSchema).max(1000).default([]) })
  .default({ rules: [] });
export type HookRuntimeSettings = z.infer<typeof HookRuntimeSettingsSchema>;

const ShellOption = z
  .string()
  .regex(/^-{1,2}[A-Za-z0-9][A-Za-z0-9-]*(=\*)?$/, 'expected an option such as --stat or --max-count=*');

/**
 * A command a shell tool may run at once, with no proposal, when every command of the line is one of these. Such a
 * command must only read, and only inside the hook roots: `subcommands` for argv[1], exact `options` (none when the
 * list is absent), and what its operands are. docs/hooks.md says what each default entry may read.
 */
export const ShellAllowSchema = z.strictObject({
  command: z.string().regex(/^[A-Za-z0-9._+-]+$/, 'expected a bare program name such as git'),
  subcommands: z.array(z.string().min(1)).optional(),
  /** The options allowed, exactly (`--max-count=*`: any value after `=`). Absent or empty: no option at all. */
  options: z.array(ShellOption).optional(),
  /**
   * What the operands (and option values) are: `paths` (each confined to the roots and kept off files.protect),
   * `pattern-then-paths` (grep, rg: the first is a search pattern, the rest paths), `text` (echo: read by nobody),
   * `none` (any operand makes the line judged: `git branch NAME` would create a branch).
   */
  operands: z.enum(['paths', 'pattern-then-paths', 'text', 'none']).default('paths'),
  /**
   * The program reads every file under a directory operand (the working directory when it names none): always
   * (`walks: true`: rg), or with one of the `walksWith` options (grep `-r`; bundled flags count). Each such directory
   * is walked first: a protected name or a link leading out of the roots anywhere below it makes the line judged.
   */
  walks: z.boolean().default(false),
  walksWith: z.array(ShellOption).optional(),
});
export type ShellAllow = z.infer<typeof ShellAllowSchema>;

/** Programs that run the rest of their arguments as a command: deny rules look through them (`env sudo id`). */
export const DEFAULT_SHELL_WRAPPERS = [
  'command',
  'builtin',
  'exec',
  'env',
  'nice',
  'ionice',
  'nohup',
  'setsid',
  'timeout',
  'time',
  'stdbuf',
  'xargs',
  'chrt',
  'taskset',
  'flock',
  'watch',
  'unbuffer',
  'chronic',
  'caffeinate',
  'busybox',
  'strace',
  'ltrace',
  'nsenter',
  'chroot',
  'runuser',
  'firejail',
  'proot',
  'parallel',
  'sudo',
  'doas',
];

const Name = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'expected a name such as shell.rm-recursive');

/** A program no shell line may run through a hook, anywhere in it (inside `$(...)` and loops too). */
export const ShellDenySchema = z.strictObject({
  name: Name,
  /** The program (argv[0], without its directory); `*` and `?` are wildcards (`mkfs*`). */
  command: z.string().regex(/^[A-Za-z0-9._+*?-]+$/, 'expected a program name or glob such as rm or mkfs*'),
  /** When set, only with one of these arguments (short flags may be bundled: `-rf` holds `-r` and `-f`). */
  anyArg: z.array(z.string().min(1)).optional(),
  /** When set, only with all of these arguments (each may be bundled with others, as above). */
  allArgs: z.array(z.string().min(1)).optional(),
  reason: z.string().min(1).max(256),
});
export type ShellDeny = z.infer<typeof ShellDenySchema>;

export const HookShellSettingsSchema = z
  .strictObject({
    allow: z.array(ShellAllowSchema).max(1000).default([]),
    deny: z.array(ShellDenySchema).max(1000).default([]),
    /** Programs that run their input as code: a pipe into one of these is refused (`curl ... | sh`). */
    interpreters: z
      .array(z.string().regex(/^[A-Za-z0-9._+-]+$/))
      .max(100)
      .default([]),
    /** Programs that run their arguments as a command (`nice`, `env`, `xargs`...): deny rules see the inner command. */
    wrappers: z
      .array(z.string().regex(/^[A-Za-z0-9._+-]+$/))
      .max(100)
      .default(DEFAULT_SHELL_WRAPPERS),
  })
  .default({ allow: [], deny: [], interpreters: [], wrappers: DEFAULT_SHELL_WRAPPERS });
export type HookShellSettings = z.infer<typeof HookShellSettingsSchema>;

/**
 * Files that name programs to run later, by someone or something other than the agent's next call: git hooks,
 * CI workflows, MCP server lists, direnv, editor tasks, dev containers. A change to one is a `program_config_edit`
 * (judged), never a `file_edit` approved by patterns alone. Globs on the path relative to its root; no `/` matches a
 * name at any depth, `**` spans folders. The default when a policy names none (policies/default.yaml lists it too).
 */
export const DEFAULT_RUNS_PROGRAMS: readonly string[] = [
  '.mcp.json',
  '.envrc',
  '.githooks/**',
  '**/.husky/**',
  'lefthook.yml',
  '.lefthook.yml',
  '.pre-commit-config.yaml',
  '.github/workflows/**',
  '.github/actions/**',
  '.gitlab-ci.yml',
  '.gitlab/ci/**',
  '.circleci/**',
  '.travis.yml',
  '.buildkite/**',
  'azure-pipelines.yml',
  'Jenkinsfile',
  'bitbucket-pipelines.yml',
  '**/.vscode/tasks.json',
  '**/.vscode/settings.json',
  '**/.vscode/launch.json',
  '**/.idea/**',
  '**/.devcontainer/**',
  '.devcontainer.json',
  '.cursor/**',
];

export const HookFilesSettingsSchema = z
  .strictObject({
    /**
     * Directories the agent's file changes and shell path arguments must stay in, after `..` and symlinks are
     * resolved; relative ones resolve against the directory the gate runs in.
     */
    roots: z.array(z.string().min(1)).min(1).max(100).default(['.']),
    /**
     * Path components no change may touch (case-insensitive), and no read tool may open: the runtimes' own settings
     * and agent-judge's state (an agent must not unhook itself or read its keys), git metadata.
     */
    protect: z
      .array(z.string().regex(/^[^/\\\0]{1,255}$/, 'expected one path component such as .claude'))
      .max(100)
      .default([]),
    /**
     * Files whose change is judged (`program_config_edit`, full-judge-review by default), not approved by patterns
     * alone: they name programs that run later ({@link DEFAULT_RUNS_PROGRAMS}).
     */
    runsPrograms: z
      .array(
        z
          .string()
          .min(1)
          .max(256)
          .regex(/^[^\0\\]+$/, 'expected a path glob such as .github/workflows/** (/ separated)'),
      )
      .max(1000)
      .default([...DEFAULT_RUNS_PROGRAMS]),
  })
  .default({ roots: ['.'], protect: [], runsPrograms: [...DEFAULT_RUNS_PROGRAMS] });
export type HookFilesSettings = z.infer<typeof HookFilesSettingsSchema>;

const Listen = z
  .string()
  .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/, 'expected HOST:PORT such as 127.0.0.1:8766');

/** The resident gate: where it listens (loopback) and who may call it (a bearer token per agent, hashed). */
export const HookGateSettingsSchema = z
  .strictObject({
    listen: Listen.default('127.0.0.1:8766'),
    agents: z.array(McpHttpAgentSchema).max(1000).default([]),
  })
  .default({ listen: '127.0.0.1:8766', agents: [] });
export type HookGateSettings = z.infer<typeof HookGateSettingsSchema>;

export const HooksSettingsSchema = z
  .strictObject({
    /**
     * How long a hook holds a call for a slow judge or a person before it answers "pending" (the runtime's own wait:
     * Claude Code's `defer` in headless runs, a deny that says when to retry otherwise). Below every runtime's hook
     * timeout: the installers set the timeout to this plus a margin.
     */
    holdFor: Duration.default('20s'),
    /**
     * Whether the person at the terminal counts as an approver: when a call waits for a person, Claude Code asks
     * the one at its terminal (`ask`) instead of answering "pending". Default no: only the policy's approvers decide.
     */
    terminalApproves: z.boolean().default(false),
    'claude-code': HookRuntimeSettingsSchema,
    codex: HookRuntimeSettingsSchema,
    gemini: HookRuntimeSettingsSchema,
    /** OpenClaw's tools (exec, read, write, edit, apply_patch, web_fetch, message, MCP and plugin tools alike). */
    openclaw: HookRuntimeSettingsSchema,
    shell: HookShellSettingsSchema,
    files: HookFilesSettingsSchema,
    gate: HookGateSettingsSchema,
  })
  .default({
    holdFor: '20s',
    terminalApproves: false,
    'claude-code': { rules: [] },
    codex: { rules: [] },
    gemini: { rules: [] },
    openclaw: { rules: [] },
    shell: { allow: [], deny: [], interpreters: [], wrappers: DEFAULT_SHELL_WRAPPERS },
    files: { roots: ['.'], protect: [], runsPrograms: [...DEFAULT_RUNS_PROGRAMS] },
    gate: { listen: '127.0.0.1:8766', agents: [] },
  });
export type HooksSettings = z.infer<typeof HooksSettingsSchema>;

/** The tool family a hook's built-in tools are named under in rules and proposals (`server` in a rule). */
export const BUILTIN_SERVER = 'builtin';

/** The action type of a shell command the runtime runs itself (after approval): parsed, then judged. */
export const SHELL_COMMAND = 'shell_command';
/** The action type of a file change the runtime makes itself: paths resolved and confined, the change bounded. */
export const FILE_EDIT = 'file_edit';
/** The action type of a network read a runtime makes itself (a fetch, a search). */
export const WEB_REQUEST = 'web_request';
/** A file change to a file that names programs to run later (`files.runsPrograms`): judged, not patterns alone. */
export const PROGRAM_CONFIG_EDIT = 'program_config_edit';
/** A network read to a private, loopback or IP-literal host, another scheme, or with a long encoded run: judged. */
export const WEB_REQUEST_SENSITIVE = 'web_request_sensitive';
