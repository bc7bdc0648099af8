/**
 * `agent-judge hook ...` and `agent-judge gate`: coding agents' hooks on the gate (docs/hooks.md). `hook
 * claude-code | codex | gemini` is the command hook itself (bin/agent-judge.mjs runs it without loading this module);
 * `hook check` lists what the policy makes of a runtime's tools; `hook install` / `uninstall` edit the runtime's
 * settings; `hook token` makes an agent's gate token; `gate` runs the resident gate on its own.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { BadInputError } from '../contracts/errors';
import { AgentIdSchema } from '../contracts/proposal';
import type { InstallFlags } from './hook-install';
import {
  GATE_RUNTIMES,
  HOOK_RUNTIMES,
  isGateRuntime,
  isHookRuntime,
  BUILTIN_SERVER,
  type GateRuntime,
  type HookRuntime,
} from '../contracts/hooks';
import { TOOL_CALL } from '../contracts/mcp';
import { loadPolicy } from '../policy/load';
import { tierFor } from '../policy/classify';
import { matchRule } from '../gate/mapping';
import { PACKAGE_ROOT } from '../package-root';
import { taskQueuesFor } from '../names';
import { printJson } from './io';

/** A runtime the resident gate answers (`hook check`): the hook runtimes and OpenClaw. */
function gateRuntimeArg(value: string): GateRuntime {
  if (!isGateRuntime(value))
    throw new BadInputError(`runtime: expected one of ${GATE_RUNTIMES.join(', ')}, got ${value}`);
  return value;
}

/** The built-in tools each runtime runs hooks for, as `hook check` lists them. */
export const KNOWN_TOOLS: Record<GateRuntime, readonly string[]> = {
  'claude-code': [
    'Read',
    'Grep',
    'Glob',
    'LS',
    'Bash',
    'Write',
    'Edit',
    'MultiEdit',
    'NotebookEdit',
    'WebFetch',
    'WebSearch',
    'TodoWrite',
    'TaskCreate',
    'TaskGet',
    'TaskUpdate',
    'TaskList',
    'TaskStop',
    'EnterPlanMode',
    'ExitPlanMode',
    'AskUserQuestion',
    'Agent',
  ],
  codex: ['Bash', 'apply_patch'],
  gemini: [
    'read_file',
    'read_many_files',
    'list_directory',
    'glob',
    'grep_search',
    'run_shell_command',
    'write_file',
    'replace',
    'web_fetch',
    'google_web_search',
    'write_todos',
    'save_memory',
    'get_internal_docs',
    'ask_user',
    'enter_plan_mode',
    'exit_plan_mode',
  ],
  openclaw: [
    'read',
    'ls',
    'write',
    'edit',
    'apply_patch',
    'exec',
    'process',
    'web_fetch',
    'web_search',
    'message',
    'browser',
    'sessions_spawn',
    'sessions_yield',
    'tool_search',
    'tool_describe',
    'tool_call',
  ],
};

function runtimeArg(value: string): HookRuntime {
  if (value === 'openclaw') {
    throw new BadInputError(
      'runtime: OpenClaw loads agent-judge as a plugin, not a hook: openclaw plugins install --force ' +
        `--accept-capabilities ${join(PACKAGE_ROOT, 'dist', 'openclaw')}, and agent-judge hook install openclaw ` +
        'for its settings (docs/openclaw.md)',
    );
  }
  if (!isHookRuntime(value))
    throw new BadInputError(`runtime: expected one of ${HOOK_RUNTIMES.join(', ')}, got ${value}`);
  return value;
}

export function registerHookCommands(program: Command): void {
  const hook = program
    .command('hook')
    .description('coding agents’ hooks on the gate: the command hook, check, install, uninstall, token');

  for (const runtime of HOOK_RUNTIMES) {
    hook
      .command(runtime)
      .description(`the ${runtime} command hook: stdin to the resident gate, its answer back (exit 2 blocks)`)
      .allowUnknownOption()
      .helpOption(false)
      .argument('[options...]')
      .action(async (options: string[]) => {
        const { runHookClient } = await import('../hooks/client');
        process.exitCode = await runHookClient([runtime, ...options]);
      });
  }

  hook
    .command('check')
    .description("list a runtime's built-in tools with the rule, tier and action type each maps to")
    .argument('<runtime>', GATE_RUNTIMES.join(' | '))
    .option('--policy <file>', 'the CompliancePolicy file (default: $AGENT_JUDGE_POLICY or policies/default.yaml)')
    .option('--tool <name...>', 'check these tool names too (MCP tools, newer tools)')
    .action(async (runtimeName: string, opts: { policy?: string; tool?: string[] }) => {
      const runtime = gateRuntimeArg(runtimeName);
      const policy = await loadPolicy(opts.policy ? { path: opts.policy } : {});
      const rules = policy.spec.hooks[runtime];
      const tools = [...new Set([...KNOWN_TOOLS[runtime], ...(opts.tool ?? [])])];
      const rows = tools.map((tool) => {
        const matched = matchRule(rules, BUILTIN_SERVER, tool);
        const actionType = matched?.rule?.actionType ?? (matched?.rule?.tier ? null : TOOL_CALL);
        return {
          tool,
          rule: matched?.name ?? null,
          tier: matched?.rule?.tier ?? tierFor(policy, actionType ?? TOOL_CALL),
          action_type: actionType,
          unmapped: matched === null,
        };
      });
      printJson({ runtime, tools: rows, unmapped: rows.filter((r) => r.unmapped).map((r) => r.tool) });
    });

  hook
    .command('install')
    .description(
      "put agent-judge in a runtime's hooks, pointed at the running agent-judge dev (this project registered with " +
        'it) and checked to answer; says whether the runtime will run it (idempotent; prints what changed)',
    )
    .argument(
      '<runtime>',
      `${HOOK_RUNTIMES.join(' | ')} | openclaw (registers the workspace, prints the plugin config)`,
    )
    .option('--project', "this project's settings (default; Claude Code: .claude/settings.local.json)")
    .option('--user', "the user's settings (~/.claude, ~/.codex, ~/.gemini)")
    .option('--dir <dir>', 'the project directory (default: the current one)')
    .option('--url <url>', 'a gate of your own (default: the running agent-judge dev, found in $AGENT_JUDGE_HOME)')
    .option('--token-file <file>', 'the gate token file for --url (default: the project token the gate gives)')
    .option('--http', "Claude Code: an http hook straight to the gate (the token goes in the settings' env)")
    .option('--headless', 'Claude Code run with -p: a held call is deferred (claude -p --resume asks again)')
    .option('--timeout <seconds>', "the runtime's hook timeout (default: the policy's holdFor + 30 s)")
    .option('--policy <file>', 'the CompliancePolicy file (holdFor, the gate address for --url)')
    .option('--state-dir <dir>', "a gate's state folder: its hook-token instead of a project token")
    .action(async (runtimeName: string, flags: InstallFlags) => {
      const { runHookInstall, runOpenClawInstall } = await import('./hook-install');
      if (runtimeName === 'openclaw') return runOpenClawInstall(flags);
      await runHookInstall(runtimeArg(runtimeName), flags);
    });

  hook
    .command('doctor')
    .description(
      "send one harmless call through the runtime's own hook configuration, as the runtime runs it, and say " +
        'whether the gate saw it',
    )
    .argument('<runtime>', HOOK_RUNTIMES.join(' | '))
    .option('--project', "this project's settings (default)")
    .option('--user', "the user's settings")
    .option('--dir <dir>', 'the project directory (default: the current one)')
    .action(async (runtimeName: string, flags: { project?: boolean; user?: boolean; dir?: string }) => {
      const { runHookDoctor } = await import('./hook-doctor');
      process.exitCode = await runHookDoctor(runtimeArg(runtimeName), flags);
    });

  hook
    .command('uninstall')
    .description("remove exactly agent-judge's entries from a runtime's hooks")
    .argument('<runtime>', HOOK_RUNTIMES.join(' | '))
    .option('--project', "this project's settings (default)")
    .option('--user', "the user's settings")
    .option('--dir <dir>', 'the project directory (default: the current one)')
    .option('--policy <file>', 'accepted as hook install takes it (uninstall needs nothing from the policy)')
    .action(async (runtimeName: string, flags: { project?: boolean; user?: boolean; dir?: string }) => {
      const runtime = runtimeArg(runtimeName);
      const { scopeOf } = await import('./hook-install');
      const { settingsPath, readSettings, withoutOurs, writeSettings } = await import('../hooks/install');
      const path = settingsPath(runtime, scopeOf(flags), resolve(flags.dir ?? '.'), homedir());
      const { next, removed } = withoutOurs(readSettings(path), runtime);
      if (removed.length > 0) writeSettings(path, next);
      printJson({ runtime, settings: path, changed: removed.length > 0, removed });
    });

  hook
    .command('token')
    .description('make a gate token for one agent: the token once, and the line for spec.hooks.gate.agents')
    .option('--agent <id>', 'the agent the token stands for (e.g. @engineering)')
    .action(async (opts: { agent?: string }) => {
      const agent = AgentIdSchema.safeParse(opts.agent ?? '');
      if (!agent.success) throw new BadInputError(`--agent: ${agent.error.issues[0]?.message ?? 'required'}`);
      const { newAgentToken, tokenSha256 } = await import('../gate/http-auth');
      const token = newAgentToken();
      process.stdout.write(
        `${token}\n` +
          `# Shown once: put it in a file only ${agent.data}'s hooks read (hook install --token-file FILE).\n` +
          '# The policy keeps only its hash; add this line under spec.hooks.gate.agents:\n' +
          `- { agent: "${agent.data}", tokenSha256: "${tokenSha256(token)}" }\n`,
      );
    });
}

export function registerGateCommand(program: Command): void {
  program
    .command('gate')
    .description('run the resident gate for coding agents’ hooks on loopback (agent-judge dev runs one too)')
    .option('--listen <host:port>', "loopback address (default: the policy's spec.hooks.gate.listen)")
    .option('--policy <file>', 'the CompliancePolicy file (default: $AGENT_JUDGE_POLICY or policies/default.yaml)')
    .option('--address <host:port>', 'Temporal frontend (default: $TEMPORAL_ADDRESS or localhost:7233)')
    .option('--namespace <name>', 'Temporal namespace (default: $TEMPORAL_NAMESPACE or default)')
    .option('--task-queue-prefix <prefix>', 'the workers’ task queue prefix')
    .option('--state-dir <dir>', 'where the dev token and the audit log are kept', '.agent-judge')
    .action(
      async (opts: { listen?: string; policy?: string; taskQueuePrefix?: string; stateDir: string }, cmd: Command) => {
        const flags = cmd.optsWithGlobals<{ address?: string; namespace?: string }>();
        const policy = await loadPolicy(opts.policy ? { path: opts.policy } : {});
        const { connectCheckedClient, temporalTarget } = await import('../client/connection');
        const target = temporalTarget({ address: flags.address, namespace: flags.namespace });
        const client = await connectCheckedClient(target, 'refusing to start, so no hook call is allowed unjudged');
        const { startResidentGate } = await import('../hooks/resident');
        const logger = (await import('./shared')).createLogger().child({ component: 'gate' });
        const gate = await startResidentGate({
          policy,
          client,
          taskQueue: taskQueuesFor(opts.taskQueuePrefix).workflow,
          stateDir: resolve(opts.stateDir),
          ...(opts.listen ? { listen: opts.listen } : {}),
          logger,
        });
        logger.info(
          { url: gate.url, agents: gate.agents, ...(gate.tokenFile ? { token_file: gate.tokenFile } : {}) },
          'listening',
        );
        await new Promise<void>((r) => {
          process.once('SIGINT', r);
          process.once('SIGTERM', r);
        });
        await gate.close();
        await client.connection.close().catch(() => undefined);
      },
    );
}
