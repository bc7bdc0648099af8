/**
 * `agent-judge hook install | uninstall <runtime>`: agent-judge's entries in a runtime's own settings file, added
 * or removed exactly, everything else left as it was. Claude Code: `.claude/settings.local.json` (`--project`: this
 * machine's paths stay out of the shared settings.json) or `~/.claude/settings.json` (`--user`), PreToolUse with
 * `onFailure: "block"` and a timeout, PostToolUse / PostToolUseFailure for the outcome; Codex: `.codex/hooks.json` or
 * `~/.codex/hooks.json`; Gemini CLI: `.gemini/settings.json` or `~/.gemini/settings.json` (BeforeTool, AfterTool).
 * Installing twice changes nothing; the plan lists what changes.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BadInputError } from '../contracts/errors';
import type { HookRuntime } from '../contracts/hooks';

export type InstallScope = 'project' | 'user';

export interface HookCommand {
  /** The command line (shell-quoted) that runs `agent-judge-hook <runtime> ...`. */
  command: string;
  /** The gate's base URL (http hooks). */
  url: string;
  /** Claude Code only: an `http` hook instead of a command hook, with the token from this value. */
  httpToken?: string;
  /** Seconds the runtime waits for the hook (above the policy's holdFor). */
  timeoutSeconds: number;
  /** Claude Code headless: `defer` held calls. */
  deferWhenHeld: boolean;
}

/** The environment variable a Claude Code http hook's Authorization header is filled from. */
export const HTTP_TOKEN_ENV = 'AGENT_JUDGE_HOOK_TOKEN';

/** The settings file of `runtime` in `scope`. */
export function settingsPath(runtime: HookRuntime, scope: InstallScope, projectDir: string, home: string): string {
  const base = scope === 'user' ? home : projectDir;
  switch (runtime) {
    case 'claude-code':
      return join(base, '.claude', scope === 'user' ? 'settings.json' : 'settings.local.json');
    case 'codex':
      return join(base, '.codex', 'hooks.json');
    case 'gemini':
      return join(base, '.gemini', 'settings.json');
  }
}

/** Single-quoted for a POSIX shell. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

type Json = Record<string, unknown>;
type Group = { matcher?: string; hooks?: Json[] } & Json;

/** Whether a hook entry is one agent-judge wrote for `runtime`. */
export function ours(hook: Json, runtime: HookRuntime): boolean {
  if (typeof hook.command === 'string') {
    // The Node client, or the sh fast path with the Node behind it (`--node PATH`).
    return new RegExp(`agent-judge-hook\\.(?:mjs|sh)'?(?: +--node +(?:'[^']*'|\\S+))? +${runtime}(?: |$)`).test(
      hook.command,
    );
  }
  if (typeof hook.url === 'string') return hook.url.includes(`/hooks/${runtime}`);
  return false;
}

/** The events and entries agent-judge installs for a runtime. */
function entries(runtime: HookRuntime, c: HookCommand): Record<string, Group> {
  const command = (post: boolean): Json => {
    const base: Json = { type: 'command', command: c.command };
    switch (runtime) {
      case 'claude-code':
        return post
          ? { ...base, timeout: 30, statusMessage: 'agent-judge: recording the outcome' }
          : { ...base, timeout: c.timeoutSeconds, onFailure: 'block', statusMessage: 'agent-judge: deciding' };
      case 'codex':
        return { ...base, timeout: post ? 30 : c.timeoutSeconds };
      case 'gemini':
        return { name: 'agent-judge', ...base, timeout: (post ? 30 : c.timeoutSeconds) * 1000 };
    }
  };
  const http = (post: boolean): Json => ({
    type: 'http',
    url: `${c.url}/hooks/claude-code${c.deferWhenHeld ? '?defer=1' : ''}`,
    headers: { Authorization: `Bearer $${HTTP_TOKEN_ENV}` },
    allowedEnvVars: [HTTP_TOKEN_ENV],
    ...(post ? { timeout: 30 } : { timeout: c.timeoutSeconds, onFailure: 'block' }),
  });
  const hook = (post: boolean) => (runtime === 'claude-code' && c.httpToken !== undefined ? http(post) : command(post));
  switch (runtime) {
    case 'claude-code':
      return {
        PreToolUse: { matcher: '*', hooks: [hook(false)] },
        PostToolUse: { matcher: '*', hooks: [hook(true)] },
        PostToolUseFailure: { matcher: '*', hooks: [hook(true)] },
      };
    case 'codex':
      // No matcher: every tool Codex runs hooks for (shell, apply_patch, MCP tools).
      return { PreToolUse: { hooks: [hook(false)] }, PostToolUse: { hooks: [hook(true)] } };
    case 'gemini':
      return { BeforeTool: { matcher: '*', hooks: [hook(false)] }, AfterTool: { matcher: '*', hooks: [hook(true)] } };
  }
}

/** `settings` without agent-judge's entries for `runtime` (empty groups and events dropped), and what went. */
export function withoutOurs(settings: Json, runtime: HookRuntime): { next: Json; removed: string[] } {
  const removed: string[] = [];
  const hooks = settings.hooks;
  const next: Json = { ...settings };
  if (hooks !== null && typeof hooks === 'object' && !Array.isArray(hooks)) {
    const kept: Json = {};
    for (const [event, groups] of Object.entries(hooks as Json)) {
      if (!Array.isArray(groups)) {
        kept[event] = groups;
        continue;
      }
      const left: Group[] = [];
      for (const g of groups as Group[]) {
        const list = Array.isArray(g?.hooks) ? g.hooks : null;
        if (!list) {
          left.push(g);
          continue;
        }
        const mine = list.filter((h) => ours(h, runtime));
        mine.forEach(() => removed.push(`${event} hook`));
        if (mine.length === 0) left.push(g);
        else if (mine.length < list.length) left.push({ ...g, hooks: list.filter((h) => !ours(h, runtime)) });
      }
      if (left.length > 0) kept[event] = left;
    }
    if (Object.keys(kept).length > 0) next.hooks = kept;
    else delete next.hooks;
  }
  if (runtime === 'claude-code') {
    const env = next.env as Json | undefined;
    if (env && typeof env === 'object' && HTTP_TOKEN_ENV in env) {
      const rest = { ...env };
      delete rest[HTTP_TOKEN_ENV];
      if (Object.keys(rest).length > 0) next.env = rest;
      else delete next.env;
      removed.push(`env ${HTTP_TOKEN_ENV}`);
    }
  }
  return { next, removed };
}

/** `settings` with agent-judge's entries for `runtime` (any earlier ones replaced), and what changed. */
export function withOurs(settings: Json, runtime: HookRuntime, c: HookCommand): { next: Json; changes: string[] } {
  const { next, removed } = withoutOurs(settings, runtime);
  const hooks: Json = { ...((next.hooks as Json | undefined) ?? {}) };
  for (const [event, group] of Object.entries(entries(runtime, c))) {
    const groups = Array.isArray(hooks[event]) ? (hooks[event] as Group[]) : [];
    hooks[event] = [...groups, group];
  }
  next.hooks = hooks;
  if (runtime === 'claude-code' && c.httpToken !== undefined) {
    next.env = { ...(next.env ?? {}), [HTTP_TOKEN_ENV]: c.httpToken };
  }
  const same = JSON.stringify(next) === JSON.stringify(settings);
  const added = Object.keys(entries(runtime, c)).map((e) => `${e} hook`);
  return {
    next,
    changes: same
      ? []
      : [
          ...(removed.length > 0 ? [`replaced ${removed.join(', ')}`] : []),
          `added ${added.join(', ')}${c.httpToken !== undefined ? `, env ${HTTP_TOKEN_ENV}` : ''}`,
        ],
  };
}

/** The settings file as JSON (an absent file is `{}`); refuses a file that is not a JSON object. */
export function readSettings(path: string): Json {
  if (!existsSync(path)) return {};
  const text = readFileSync(path, 'utf8');
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new BadInputError(`${path}: not valid JSON (${(err as Error).message}); fix it or move it away first`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new BadInputError(`${path}: expected a JSON object`);
  }
  return parsed as Json;
}

/** Writes the settings file whole (a temporary file renamed over it), creating its folder. */
export function writeSettings(path: string, settings: Json): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.agent-judge-${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}
