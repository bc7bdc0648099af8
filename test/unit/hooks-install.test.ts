/**
 * `agent-judge hook install | uninstall`, through the real command on real files: each runtime's settings gain
 * exactly agent-judge's entries (Claude Code's PreToolUse with onFailure block and a timeout), a second install
 * changes nothing, and uninstall removes exactly what install added, leaving the user's own hooks and settings.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main';

const dir = mkdtempSync(join(tmpdir(), 'aj-install-'));
// No running dev for this test's user: its own empty state folder.
process.env.AGENT_JUDGE_HOME = join(dir, 'user-state');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(...args: string[]): Promise<{ code: number; out: Record<string, unknown> }> {
  let out = '';
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (c: string) => {
    out += c;
    return true;
  };
  let code: number;
  try {
    process.exitCode = undefined;
    code = await main(['node', 'agent-judge', ...args]);
  } finally {
    process.stdout.write = write;
  }
  return { code, out: out ? (JSON.parse(out) as Record<string, unknown>) : {} };
}

describe('hook install and uninstall', () => {
  it('Claude Code: adds the hooks beside the user’s own, idempotent, removed exactly', async () => {
    const path = join(dir, '.claude', 'settings.local.json');
    mkdirSync(join(dir, '.claude'));
    const own = {
      permissions: { allow: ['Bash(npm test)'] },
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './mine.sh' }] }] },
    };
    writeFileSync(path, JSON.stringify(own));
    const first = await run('hook', 'install', 'claude-code', '--project', '--dir', dir, '--state-dir', join(dir, 's'));
    expect(first).toMatchObject({ code: 0, out: { changed: true, settings: path } });
    const installed = JSON.parse(readFileSync(path, 'utf8')) as {
      permissions: unknown;
      hooks: Record<string, Array<{ matcher?: string; hooks: Array<Record<string, unknown>> }>>;
    };
    expect(installed.permissions).toEqual(own.permissions);
    expect(installed.hooks.PreToolUse).toHaveLength(2);
    const ours = installed.hooks.PreToolUse![1]!;
    expect(ours.matcher).toBe('*');
    expect(ours.hooks[0]).toMatchObject({ type: 'command', onFailure: 'block', timeout: 50 });
    expect(String(ours.hooks[0]!.command)).toMatch(
      /agent-judge-hook\.sh'? --node \S+ claude-code --url http:\/\/127\.0\.0\.1:8766/,
    );
    expect(Object.keys(installed.hooks).sort()).toEqual(['PostToolUse', 'PostToolUseFailure', 'PreToolUse']);

    const again = await run('hook', 'install', 'claude-code', '--dir', dir, '--state-dir', join(dir, 's'));
    expect(again.out).toMatchObject({ changed: false, changes: [] });
    const removed = await run('hook', 'uninstall', 'claude-code', '--dir', dir);
    expect(removed.out).toMatchObject({ changed: true });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(own);
  });

  it('Claude Code --http: an http hook with the token from the settings’ env, removed with it', async () => {
    const home = join(dir, 'http');
    mkdirSync(join(home, 's'), { recursive: true });
    writeFileSync(join(home, 's', 'hook-token'), 'ajt_test\n');
    await run('hook', 'install', 'claude-code', '--http', '--headless', '--dir', home, '--state-dir', join(home, 's'));
    const s = JSON.parse(readFileSync(join(home, '.claude', 'settings.local.json'), 'utf8')) as {
      env: Record<string, string>;
      hooks: { PreToolUse: Array<{ hooks: Array<Record<string, unknown>> }> };
    };
    expect(s.env).toEqual({ AGENT_JUDGE_HOOK_TOKEN: 'ajt_test' });
    expect(s.hooks.PreToolUse[0]!.hooks[0]).toMatchObject({
      type: 'http',
      url: 'http://127.0.0.1:8766/hooks/claude-code?defer=1',
      headers: { Authorization: 'Bearer $AGENT_JUDGE_HOOK_TOKEN' },
      allowedEnvVars: ['AGENT_JUDGE_HOOK_TOKEN'],
      onFailure: 'block',
    });
    await run('hook', 'uninstall', 'claude-code', '--dir', home);
    expect(JSON.parse(readFileSync(join(home, '.claude', 'settings.local.json'), 'utf8'))).toEqual({});
  });

  it('Codex and Gemini CLI: their own files and events, with timeouts in their units', async () => {
    await run('hook', 'install', 'codex', '--dir', dir, '--state-dir', join(dir, 's'));
    const c = JSON.parse(readFileSync(join(dir, '.codex', 'hooks.json'), 'utf8')) as {
      hooks: Record<string, Array<{ matcher?: string; hooks: Array<Record<string, unknown>> }>>;
    };
    expect(Object.keys(c)).toEqual(['hooks']);
    expect(Object.keys(c.hooks).sort()).toEqual(['PostToolUse', 'PreToolUse']);
    expect(c.hooks.PreToolUse![0]).not.toHaveProperty('matcher');
    expect(c.hooks.PreToolUse![0]!.hooks[0]).toMatchObject({ type: 'command', timeout: 50 });
    await run('hook', 'install', 'gemini', '--dir', dir, '--timeout', '40', '--state-dir', join(dir, 's'));
    const g = JSON.parse(readFileSync(join(dir, '.gemini', 'settings.json'), 'utf8')) as {
      hooks: Record<string, Array<{ hooks: Array<Record<string, unknown>> }>>;
    };
    expect(g.hooks.BeforeTool![0]!.hooks[0]).toMatchObject({ name: 'agent-judge', type: 'command', timeout: 40_000 });
    await run('hook', 'uninstall', 'codex', '--dir', dir);
    await run('hook', 'uninstall', 'gemini', '--dir', dir);
    expect(JSON.parse(readFileSync(join(dir, '.codex', 'hooks.json'), 'utf8'))).toEqual({});
    expect(JSON.parse(readFileSync(join(dir, '.gemini', 'settings.json'), 'utf8'))).toEqual({});
  });

  it('refuses a settings file that is not JSON, naming it, and changes nothing', async () => {
    const bad = join(dir, 'bad');
    mkdirSync(join(bad, '.gemini'), { recursive: true });
    writeFileSync(join(bad, '.gemini', 'settings.json'), '{ nope');
    const r = await run('hook', 'install', 'gemini', '--dir', bad);
    expect(r.code).toBe(2);
    expect(readFileSync(join(bad, '.gemini', 'settings.json'), 'utf8')).toBe('{ nope');
  });

  it('with no agent-judge dev running and no gate named, says so and writes nothing', async () => {
    const lone = join(dir, 'lone');
    mkdirSync(lone);
    let err = '';
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = (c: string) => {
      err += c;
      return true;
    };
    try {
      const r = await run('hook', 'install', 'claude-code', '--dir', lone);
      expect(r.code).not.toBe(0);
    } finally {
      process.stderr.write = write;
    }
    expect(err).toContain(`no agent-judge dev is running for this user (${join(dir, 'user-state', 'dev.json')}`);
    expect(existsSync(join(lone, '.claude'))).toBe(false);
  });

  it('uninstall takes --policy as install does', async () => {
    const r = await run('hook', 'uninstall', 'gemini', '--dir', dir, '--policy', 'policies/default.yaml');
    expect(r.code).toBe(0);
  });
});

describe('hook check', () => {
  it("lists each of a runtime's tools with its rule, tier and action type", async () => {
    const r = await run('hook', 'check', 'claude-code', '--tool', 'mcp__forge__merge');
    const rows = (r.out as { tools: Array<Record<string, unknown>> }).tools;
    const row = (tool: string) => rows.find((t) => t.tool === tool);
    expect(row('Read')).toMatchObject({ rule: 'claude.read', tier: 'no-judge', action_type: null });
    expect(row('Bash')).toMatchObject({ rule: 'claude.bash', tier: 'full-judge-review', action_type: 'shell_command' });
    expect(row('Write')).toMatchObject({ tier: 'lightweight-approval', action_type: 'file_edit' });
    expect(row('Agent')).toMatchObject({ rule: 'claude.agent', tier: 'no-judge' });
    expect(row('mcp__forge__merge')).toMatchObject({
      rule: null,
      tier: 'human-only',
      action_type: 'tool_call',
      unmapped: true,
    });
    expect(r.out.unmapped).toEqual(['mcp__forge__merge']);
  });
});
