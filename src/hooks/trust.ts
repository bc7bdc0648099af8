/**
 * Whether a runtime will run the hook `hook install` wrote, read from the runtime's own records, and the exact step
 * that makes it (docs/hooks.md). Codex loads a project's `.codex/` only in a trusted project
 * (`[projects."<dir>"] trust_level = "trusted"` in `$CODEX_HOME/config.toml`) and runs a new or changed hook only once
 * its hash is trusted (`[hooks.state."<hooks.json>:pre_tool_use:<i>:<j>"] trusted_hash`, written by /hooks). Gemini
 * CLI merges a project's `.gemini/settings.json` only in a trusted folder (`~/.gemini/trustedFolders.json`, or
 * `$GEMINI_CLI_TRUSTED_FOLDERS_PATH`; the longest matching rule wins, TRUST_PARENT trusts the folder's parent), unless
 * `security.folderTrust.enabled` is false. Claude Code runs its settings' hooks without a trust step.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { processEnv } from '../config/process-env';
import type { HookRuntime } from '../contracts/hooks';

/** The runtime's trust state for our hook: `trusted` (it will run), `untrusted` (it will not), `unknown`. */
export interface TrustState {
  state: 'trusted' | 'untrusted' | 'unknown' | 'not-needed';
  /** What was read, in the runtime's words. */
  detail: string;
  /** The step that makes the runtime run the hook, when it does not yet. */
  step?: string;
}

export interface TrustContext {
  scope: 'project' | 'user';
  projectDir: string;
  home: string;
  /** The settings file the hook was written to. */
  settingsFile: string;
  env?: NodeJS.ProcessEnv;
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function within(p: string, root: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

function readToml(file: string): Record<string, unknown> | null {
  if (!existsSync(file)) return {};
  try {
    return parseToml(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

const CODEX_HOOK_STEP =
  'run `codex` in the project once and trust agent-judge\'s hooks when it asks ("Hooks need review"), or review them ' +
  'with /hooks; codex exec --dangerously-bypass-hook-trust runs them without (automation that vets its hook files)';

function codexTrust(c: TrustContext): TrustState {
  const env = c.env ?? processEnv();
  const codexHome = env.CODEX_HOME?.trim() || join(c.home, '.codex');
  const configFile = join(codexHome, 'config.toml');
  const config = readToml(configFile);
  if (config === null) return { state: 'unknown', detail: `${configFile} is not valid TOML` };
  const projects = (config.projects ?? {}) as Record<string, { trust_level?: unknown }>;
  const dir = real(c.projectDir);
  if (c.scope === 'project') {
    const level = Object.entries(projects)
      .filter(([p]) => within(dir, real(p)))
      .sort(([a], [b]) => b.length - a.length)[0]?.[1]?.trust_level;
    if (level !== 'trusted') {
      return {
        state: 'untrusted',
        detail: `${dir} is not a trusted Codex project (${configFile}): Codex ignores its .codex/hooks.json`,
        step:
          `run \`codex\` in ${dir} and choose "Trust and continue", or add [projects.${JSON.stringify(dir)}] ` +
          `trust_level = "trusted" to ${configFile}; then ${CODEX_HOOK_STEP}`,
      };
    }
  }
  const hooks = (config.hooks ?? {}) as { state?: Record<string, { trusted_hash?: unknown; enabled?: unknown }> };
  const prefix = `${c.settingsFile}:pre_tool_use:`;
  const entry = Object.entries(hooks.state ?? {}).find(([key, v]) => key.startsWith(prefix) && v?.trusted_hash);
  if (!entry) {
    return {
      state: 'untrusted',
      detail: `Codex has no trusted hash for the PreToolUse hook of ${c.settingsFile}: it skips the hook silently`,
      step: CODEX_HOOK_STEP,
    };
  }
  if (entry[1].enabled === false) {
    return { state: 'untrusted', detail: `the hook is disabled in ${configFile}`, step: 'enable it with /hooks' };
  }
  return {
    state: 'trusted',
    detail:
      `Codex trusts a PreToolUse hook of ${c.settingsFile} (${configFile}); a changed hook needs trusting again ` +
      '(agent-judge hook doctor codex shows whether it runs)',
  };
}

function geminiTrust(c: TrustContext): TrustState {
  if (c.scope === 'user') return { state: 'not-needed', detail: "Gemini CLI always loads the user's settings" };
  const env = c.env ?? processEnv();
  const userSettings = join(c.home, '.gemini', 'settings.json');
  try {
    const s = existsSync(userSettings)
      ? (JSON.parse(readFileSync(userSettings, 'utf8')) as { security?: { folderTrust?: { enabled?: unknown } } })
      : {};
    if (s.security?.folderTrust?.enabled === false) {
      return { state: 'not-needed', detail: `folder trust is off (${userSettings}): every folder's settings load` };
    }
  } catch {
    return { state: 'unknown', detail: `${userSettings} is not valid JSON` };
  }
  const file = env.GEMINI_CLI_TRUSTED_FOLDERS_PATH?.trim() || join(c.home, '.gemini', 'trustedFolders.json');
  let rules: Record<string, unknown> = {};
  try {
    if (existsSync(file)) rules = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return { state: 'unknown', detail: `${file} is not valid JSON` };
  }
  const dir = real(c.projectDir);
  let best: { len: number; level: unknown } = { len: -1, level: undefined };
  for (const [rule, level] of Object.entries(rules)) {
    const effective = level === 'TRUST_PARENT' ? dirname(rule) : rule;
    if (within(dir, real(effective)) && rule.length > best.len) best = { len: rule.length, level };
  }
  const step =
    `run \`gemini\` in ${dir} and choose to trust the folder, or add ${JSON.stringify(dir)}: "TRUST_FOLDER" to ` +
    `${file}; headless runs (gemini -p) can set GEMINI_CLI_TRUST_WORKSPACE=true. Not --skip-trust: it comes after ` +
    "the project's settings were skipped, so the hook stays off";
  if (best.level === 'TRUST_FOLDER' || best.level === 'TRUST_PARENT') {
    return { state: 'trusted', detail: `${dir} is a trusted folder (${file})` };
  }
  if (best.level === 'DO_NOT_TRUST') {
    return {
      state: 'untrusted',
      detail: `${dir} is marked DO_NOT_TRUST in ${file}: .gemini/settings.json is skipped`,
      step,
    };
  }
  return {
    state: 'untrusted',
    detail: `${dir} is not a trusted folder (${file}): Gemini CLI skips its .gemini/settings.json, hooks included`,
    step,
  };
}

/** The runtime's trust state for the hook written to `c.settingsFile`. */
export function trustState(runtime: HookRuntime, c: TrustContext): TrustState {
  switch (runtime) {
    case 'claude-code':
      return { state: 'not-needed', detail: 'Claude Code runs the hooks of its settings files without a trust step' };
    case 'codex':
      return codexTrust(c);
    case 'gemini':
      return geminiTrust(c);
  }
}
