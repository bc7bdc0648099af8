/**
 * `agent-judge hook install <runtime>`: the runtime's settings gain agent-judge's hook, pointed at a gate that was
 * seen to answer. By default the gate is the running `agent-judge dev` (found in the user's state folder, wherever
 * it runs): the project is registered with it (its own token, its own roots) and nothing is written unless that
 * worked. With `--url`, `--token-file` or `--state-dir` the hook points where it is told, and what the gate said is
 * reported. Codex and Gemini CLI also say whether they will run the hook (their trust state) and how to make them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { AgentJudgeError, BadInputError } from '../contracts/errors';
import type { HookRuntime } from '../contracts/hooks';
import { durationMs } from '../contracts/duration';
import { readRunningDev, runningDevFile } from '../config/user-state';
import { loadPolicy } from '../policy/load';
import { PACKAGE_ROOT } from '../package-root';
import { printJson } from './io';

export interface InstallFlags {
  project?: boolean;
  user?: boolean;
  dir?: string;
  url?: string;
  tokenFile?: string;
  http?: boolean;
  headless?: boolean;
  timeout?: string;
  policy?: string;
  stateDir?: string;
}

export function scopeOf(flags: { project?: boolean; user?: boolean }): 'project' | 'user' {
  if (flags.project && flags.user) throw new BadInputError('--project and --user: choose one');
  return flags.user ? 'user' : 'project';
}

/** Where the hook points: the gate's URL and the token file, and what the gate said (or why it was not asked). */
interface Target {
  url: string;
  tokenFile: string;
  project: string | null;
  gate: string;
  notes: string[];
}

/** The running dev's gate, with this project registered; an error says exactly what is wrong. */
async function registeredTarget(dir: string): Promise<Target> {
  const dev = readRunningDev();
  if (!dev) {
    throw new AgentJudgeError(
      `no agent-judge dev is running for this user (${runningDevFile()} names none): start \`agent-judge dev\` ` +
        'in any folder and run this again; for a gate of your own pass --url and --token-file',
    );
  }
  if (!dev.gate) {
    throw new AgentJudgeError(
      `the agent-judge dev running in ${dev.cwd} (pid ${dev.pid}) has no gate for hooks: see the "hooks" line of ` +
        'its banner',
    );
  }
  if (!dev.gate.token_file) {
    throw new AgentJudgeError(
      `the gate at ${dev.gate.url} takes the tokens spec.hooks.gate.agents lists: pass --token-file with your ` +
        "agent's token (agent-judge hook token --agent @you)",
    );
  }
  const { gateWhoami, registerProject } = await import('../hooks/gate-check');
  const admin = await gateWhoami(dev.gate.url, dev.gate.token_file);
  if (!admin.registers_projects) {
    throw new AgentJudgeError(`the gate at ${dev.gate.url} does not register projects (agent-judge ${admin.version})`);
  }
  const registered = await registerProject(dev.gate.url, dev.gate.token_file, dir);
  // The project's own token, asked back: the hook will use exactly this.
  const own = await gateWhoami(dev.gate.url, registered.token_file);
  if (own.project !== registered.dir) {
    throw new AgentJudgeError(`the gate at ${dev.gate.url} did not take ${registered.dir} as a project`);
  }
  return {
    url: dev.gate.url,
    tokenFile: registered.token_file,
    project: registered.dir,
    gate:
      `the gate at ${dev.gate.url} (agent-judge dev in ${dev.cwd}) answers for ${registered.dir} as ${own.agent}` +
      `${registered.created ? ' (newly registered)' : ''}`,
    notes: [],
  };
}

/** Where `--url`, `--token-file`, `--state-dir` point, and what the gate there says about the token. */
async function explicitTarget(flags: InstallFlags, listen: string): Promise<Target> {
  const url = (flags.url ?? `http://${listen}`).replace(/\/+$/, '');
  if (!/^http:\/\/[^/]+$/.test(url)) throw new BadInputError(`--url: expected http://HOST:PORT, got ${url}`);
  const tokenFile = resolve(flags.tokenFile ?? join(flags.stateDir ?? '.agent-judge', 'hook-token'));
  let gate: string;
  if (!existsSync(tokenFile)) {
    gate = `not asked: ${tokenFile} does not exist yet (agent-judge dev makes it on start)`;
  } else {
    const { gateWhoami } = await import('../hooks/gate-check');
    gate = await gateWhoami(url, tokenFile).then(
      (who) => `the gate at ${url} answers this token as ${who.agent}`,
      (err: Error) => `not answering for this token: ${err.message}`,
    );
  }
  return { url, tokenFile, project: null, gate, notes: [] };
}

/**
 * `hook install openclaw`: OpenClaw loads agent-judge as a plugin, not a settings hook, so nothing is written; the
 * agent's workspace is registered as a project with the running gate and the plugin's two settings are printed.
 */
export async function runOpenClawInstall(flags: InstallFlags): Promise<void> {
  const dir = resolve(flags.dir ?? '.');
  const explicit = flags.url !== undefined || flags.tokenFile !== undefined || flags.stateDir !== undefined;
  const policy = explicit ? await loadPolicy(flags.policy ? { path: flags.policy } : {}) : null;
  const target = policy ? await explicitTarget(flags, policy.spec.hooks.gate.listen) : await registeredTarget(dir);
  const config = 'plugins.entries.agent-judge.config';
  printJson({
    runtime: 'openclaw',
    plugin: join(PACKAGE_ROOT, 'dist', 'openclaw'),
    gate: target.gate,
    ...(target.project ? { project: target.project } : {}),
    token_file: target.tokenFile,
    commands: [
      `openclaw plugins install --force --accept-capabilities ${join(PACKAGE_ROOT, 'dist', 'openclaw')}`,
      `openclaw config set ${config}.gateUrl ${JSON.stringify(target.url)}`,
      `openclaw config set ${config}.tokenFile ${JSON.stringify(target.tokenFile)}`,
      `openclaw config set ${config}.cwd ${JSON.stringify(dir)}`,
    ],
  });
}

export async function runHookInstall(runtime: HookRuntime, flags: InstallFlags): Promise<void> {
  const scope = scopeOf(flags);
  const policy = await loadPolicy(flags.policy ? { path: flags.policy } : {});
  const timeoutSeconds =
    flags.timeout !== undefined ? Number(flags.timeout) : Math.ceil(durationMs(policy.spec.hooks.holdFor) / 1000) + 30;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 5 || timeoutSeconds > 3600) {
    throw new BadInputError(`--timeout: expected whole seconds between 5 and 3600, got ${flags.timeout}`);
  }
  if (flags.http && runtime !== 'claude-code') throw new BadInputError('--http: only Claude Code has http hooks');
  const { settingsPath, shellQuote, readSettings, withOurs, writeSettings } = await import('../hooks/install');
  const dir = resolve(flags.dir ?? '.');
  const path = settingsPath(runtime, scope, dir, homedir());
  const settings = readSettings(path); // a broken file is refused before anything is registered
  const explicit = flags.url !== undefined || flags.tokenFile !== undefined || flags.stateDir !== undefined;
  const target = explicit ? await explicitTarget(flags, policy.spec.hooks.gate.listen) : await registeredTarget(dir);
  let httpToken: string | undefined;
  if (flags.http) {
    if (!existsSync(target.tokenFile)) {
      throw new BadInputError(
        `--http: ${target.tokenFile} does not exist yet; start agent-judge dev once (or pass --token-file)`,
      );
    }
    httpToken = readFileSync(target.tokenFile, 'utf8').trim();
  }
  // The sh + curl fast path (bin/agent-judge-hook.sh: no Node start per call, the Node client behind it for
  // anything else); Windows has no /bin/sh, so the Node client alone.
  const hookCommand =
    process.platform === 'win32'
      ? [process.execPath, join(PACKAGE_ROOT, 'bin', 'agent-judge-hook.mjs')]
      : ['/bin/sh', join(PACKAGE_ROOT, 'bin', 'agent-judge-hook.sh'), '--node', process.execPath];
  const command = [
    ...hookCommand,
    runtime,
    '--url',
    target.url,
    '--token-file',
    target.tokenFile,
    '--timeout-ms',
    String((timeoutSeconds - 2) * 1000),
    ...(flags.headless ? ['--defer-when-held'] : []),
  ]
    .map(shellQuote)
    .join(' ');
  const { next, changes } = withOurs(settings, runtime, {
    command,
    url: target.url,
    ...(httpToken !== undefined ? { httpToken } : {}),
    timeoutSeconds,
    deferWhenHeld: flags.headless === true,
  });
  if (changes.length > 0) writeSettings(path, next);
  const { trustState } = await import('../hooks/trust');
  const trust = trustState(runtime, { scope, projectDir: dir, home: homedir(), settingsFile: path });
  printJson({
    runtime,
    settings: path,
    changed: changes.length > 0,
    changes,
    gate: target.gate,
    ...(target.project ? { project: target.project } : {}),
    token_file: target.tokenFile,
    trust,
    notes: target.notes,
  });
}
