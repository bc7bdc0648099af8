/**
 * Whether a runtime will run agent-judge's hook (src/hooks/trust.ts), read from the runtime's own records as Codex
 * (config.toml: project trust_level, hooks.state trusted_hash) and Gemini CLI (trustedFolders.json, longest rule wins)
 * keep them; and which folders `hook install` may register as a project (src/hooks/projects.ts).
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { trustState } from '../../src/hooks/trust';
import { projectDirProblem, ProjectRegistry } from '../../src/hooks/projects';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aj-trust-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function fresh(name: string): { home: string; project: string } {
  const home = join(root, name, 'home');
  const project = join(root, name, 'work', 'proj');
  mkdirSync(home, { recursive: true });
  mkdirSync(project, { recursive: true });
  return { home, project };
}

describe('Codex trust state', () => {
  it('untrusted project, then trusted project without hook trust, then both', () => {
    const { home, project } = fresh('codex');
    const settingsFile = join(project, '.codex', 'hooks.json');
    const ctx = { scope: 'project' as const, projectDir: project, home, settingsFile, env: {} };
    const first = trustState('codex', ctx);
    expect(first.state).toBe('untrusted');
    expect(first.detail).toContain('is not a trusted Codex project');
    expect(first.step).toContain(`[projects.${JSON.stringify(project)}]`);

    mkdirSync(join(home, '.codex'));
    const config = join(home, '.codex', 'config.toml');
    writeFileSync(config, `[projects.${JSON.stringify(project)}]\ntrust_level = "trusted"\n`);
    const second = trustState('codex', ctx);
    expect(second.state).toBe('untrusted');
    expect(second.detail).toContain('no trusted hash');
    expect(second.step).toContain('/hooks');

    writeFileSync(
      config,
      `[projects.${JSON.stringify(project)}]\ntrust_level = "trusted"\n\n` +
        `[hooks.state.${JSON.stringify(`${settingsFile}:pre_tool_use:0:0`)}]\ntrusted_hash = "sha256:ab"\n`,
    );
    expect(trustState('codex', ctx).state).toBe('trusted');
    // CODEX_HOME moves the config: the same project is untrusted there.
    expect(trustState('codex', { ...ctx, env: { CODEX_HOME: join(home, 'elsewhere') } }).state).toBe('untrusted');
  });
});

describe('Gemini CLI trust state', () => {
  it('reads trustedFolders.json as Gemini does: longest rule wins, TRUST_PARENT trusts the parent', () => {
    const { home, project } = fresh('gemini');
    const settingsFile = join(project, '.gemini', 'settings.json');
    const ctx = { scope: 'project' as const, projectDir: project, home, settingsFile, env: {} };
    const none = trustState('gemini', ctx);
    expect(none).toMatchObject({ state: 'untrusted' });
    expect(none.step).toContain('GEMINI_CLI_TRUST_WORKSPACE=true');
    expect(none.step).toContain('Not --skip-trust');
    mkdirSync(join(home, '.gemini'));
    const file = join(home, '.gemini', 'trustedFolders.json');
    writeFileSync(file, JSON.stringify({ [join(project, 'x')]: 'TRUST_PARENT' }));
    expect(trustState('gemini', ctx).state).toBe('trusted');
    writeFileSync(file, JSON.stringify({ [dirname(project)]: 'TRUST_FOLDER', [project]: 'DO_NOT_TRUST' }));
    expect(trustState('gemini', ctx).state).toBe('untrusted');
    writeFileSync(file, JSON.stringify({ [dirname(project)]: 'DO_NOT_TRUST', [project]: 'TRUST_FOLDER' }));
    expect(trustState('gemini', ctx).state).toBe('trusted');
    // Another file (GEMINI_CLI_TRUSTED_FOLDERS_PATH) is the one read.
    expect(
      trustState('gemini', { ...ctx, env: { GEMINI_CLI_TRUSTED_FOLDERS_PATH: join(home, 'none.json') } }).state,
    ).toBe('untrusted');
    writeFileSync(
      join(home, '.gemini', 'settings.json'),
      JSON.stringify({ security: { folderTrust: { enabled: false } } }),
    );
    expect(
      trustState('gemini', { ...ctx, env: { GEMINI_CLI_TRUSTED_FOLDERS_PATH: join(home, 'none.json') } }).state,
    ).toBe('not-needed');
    expect(trustState('gemini', { ...ctx, scope: 'user' }).state).toBe('not-needed');
  });
});

describe('which folders may be hooked projects', () => {
  const { home, project } = fresh('projects');
  const state = join(home, '.agent-judge');
  mkdirSync(state);
  const o = { stateDirs: [state], protect: ['.agent-judge', '.git'], home };

  it('a project folder is accepted; the root, the home folder and its ancestors never', () => {
    expect(projectDirProblem(project, o)).toBeNull();
    // Every ancestor of the home folder, down to the root.
    const parts = home.split(sep);
    for (let n = 1; n <= parts.length; n++) {
      const ancestor = parts.slice(0, n).join(sep) || sep;
      expect(projectDirProblem(ancestor, o), ancestor).not.toBeNull();
    }
    expect(projectDirProblem('relative/path', o)).toContain('not an absolute path');
    expect(projectDirProblem(join(project, 'missing'), o)).toContain('does not exist');
    expect(projectDirProblem(join(state, 'x'), o)).toContain('does not exist');
    mkdirSync(join(state, 'inside'));
    expect(projectDirProblem(join(state, 'inside'), o)).toContain("inside agent-judge's state folder");
  });

  it('a project holding a state folder outside a protected name is refused', () => {
    const outer = join(root, 'projects', 'outer');
    const exposed = join(outer, 'state');
    mkdirSync(exposed, { recursive: true });
    expect(projectDirProblem(outer, { ...o, stateDirs: [exposed] })).toContain('outside spec.hooks.files.protect');
    const hidden = join(outer, '.agent-judge');
    mkdirSync(hidden);
    expect(projectDirProblem(outer, { ...o, stateDirs: [hidden] })).toBeNull();
  });

  it('the registry gives one token per project, kept across registrations, and knows it by token only', () => {
    const registry = new ProjectRegistry(join(root, 'registry'));
    const first = registry.register(project);
    const again = registry.register(project);
    expect(again).toEqual({ ...first, created: false });
    const token = readFileSync(first.tokenFile, 'utf8').trim();
    expect(registry.byToken(token)?.dir).toBe(project);
    expect(registry.byToken(`${token}x`)).toBeNull();
    expect(registry.forget(project)).toBe(true);
    expect(registry.byToken(token)).toBeNull();
  });
});
