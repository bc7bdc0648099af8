/**
 * Issue 28: a policy file says only what differs from policies/default.yaml. Every section gets the default's
 * values; mappings merge key by key, lists replace whole, null removes a default key; errors name the file and
 * line, the field and the rule; `policy show` names where each value comes from and `policy check` what a file
 * changes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { PolicyError } from '../../src/contracts/errors';
import { tierFor } from '../../src/policy/classify';
import { DEFAULT_POLICY_PATH, loadPolicy, loadPolicyLayers } from '../../src/policy/load';
import { layerOver } from '../../src/policy/layers';
import { renderChanges, renderEffectivePolicy } from '../../src/cli/policy';

const dir = mkdtempSync(join(tmpdir(), 'agent-judge-layers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HEAD = 'apiVersion: agent-judge.dev/v1alpha1\nkind: CompliancePolicy\nmetadata:\n  name: mine\n';
let n = 0;
function file(text: string): string {
  const path = join(dir, `mine-${++n}.yaml`);
  writeFileSync(path, text);
  return path;
}
const load = (path: string) => loadPolicy({ path, baseDir: dir, env: {} });
const defaults = () => loadPolicy({ path: DEFAULT_POLICY_PATH, baseDir: dir, env: {} });

describe('a policy file laid over the default', () => {
  it('a file with only riskMatrix and spec.mcp (the issue) is complete: other sections are the default', async () => {
    const path = file(
      HEAD +
        'spec:\n' +
        '  riskMatrix:\n' +
        '    - { actionType: file_write, surface: files, surfaceArea: 4, actionRisk: 4, tier: full-judge-review }\n' +
        '  mcp:\n' +
        '    rules:\n' +
        '      - { name: fs.write, tool: write_file, actionType: file_write, target: { path: $.path } }\n',
    );
    const policy = await load(path);
    const base = await defaults();
    expect(policy.spec.riskMatrix.map((e) => e.actionType)).toEqual(['file_write']);
    expect(policy.spec.mcp.rules.map((r) => r.name)).toEqual(['fs.write']);
    // spec.mcp merged key by key: the default's other mcp settings stay.
    expect(policy.spec.mcp.holdFor).toBe(base.spec.mcp.holdFor);
    expect(policy.spec.mcp.http).toEqual(base.spec.mcp.http);
    for (const section of Object.keys(base.spec) as Array<keyof typeof base.spec>) {
      if (section === 'riskMatrix' || section === 'mcp') continue;
      expect(policy.spec[section], `spec.${section}`).toEqual(base.spec[section]);
    }
  });

  it('a file that sets nothing but its name is the default policy under that name', async () => {
    const policy = await load(file(HEAD));
    const base = await defaults();
    expect(policy.metadata.name).toBe('mine');
    expect({ ...policy, metadata: base.metadata }).toEqual(base);
  });

  it('files.roots alone: the roots change, nothing else does', async () => {
    const policy = await load(file(`${HEAD}spec:\n  files:\n    roots: [/srv/ws]\n`));
    expect(policy.spec.files.roots).toEqual(['/srv/ws']);
    expect(policy.spec.exec).toEqual((await defaults()).spec.exec);
  });

  it('a list replaces the default list whole: one riskMatrix entry leaves other types to defaultTier', async () => {
    const policy = await load(
      file(
        `${HEAD}spec:\n  riskMatrix:\n` +
          '    - { actionType: memory_write, surface: memory, surfaceArea: 1, actionRisk: 1, tier: no-judge }\n',
      ),
    );
    expect(tierFor(policy, 'memory_write')).toBe('no-judge');
    expect(tierFor(policy, 'issue_comment')).toBe('human-only');
    expect(policy.spec.lightweight.deny.length).toBeGreaterThan(0);
  });

  it('mappings merge key by key at every depth; null removes a default key', async () => {
    const policy = await load(
      file(
        `${HEAD}spec:\n  escalation:\n    quorum:\n      full-judge-review: 2\n` +
          '  lightweight:\n    topics:\n      vault_note_create: null\n',
      ),
    );
    expect(policy.spec.escalation.quorum).toEqual({ 'human-only': 1, 'full-judge-review': 2 });
    expect(policy.spec.escalation.timeout).toBe('24h');
    expect(policy.spec.lightweight.topics).toEqual({});
    expect(policy.spec.lightweight.deny).toEqual((await defaults()).spec.lightweight.deny);
  });

  it('layerOver leaves both inputs unchanged', () => {
    const base = { a: { b: 1, c: [1, 2] }, d: 1 };
    const over = { a: { c: [3] }, d: null };
    expect(layerOver(base, over)).toEqual({ a: { b: 1, c: [3] } });
    expect(base).toEqual({ a: { b: 1, c: [1, 2] }, d: 1 });
    expect(over).toEqual({ a: { c: [3] }, d: null });
  });
});

describe('errors in a layered file', () => {
  async function refusal(path: string): Promise<string> {
    const err = await load(path).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PolicyError);
    return (err as Error).message;
  }

  it('name the file and line, the field and the rule', async () => {
    const path = file(`${HEAD}spec:\n  thresholds:\n    human: 2\n`);
    expect(await refusal(path)).toBe(
      `policy ${path}:7: spec.thresholds.human: Too big: expected number to be <=1; ` +
        'spec.thresholds: thresholds.human must not be above thresholds.clarify',
    );
  });

  it('a rule across fields that one of them breaks: the line of the field the file set', async () => {
    const path = file(`${HEAD}spec:\n  thresholds:\n    human: 0.9\n`);
    expect(await refusal(path)).toBe(
      `policy ${path}:6: spec.thresholds: thresholds.human must not be above thresholds.clarify`,
    );
  });

  it('a typo in a section name is refused, not ignored', async () => {
    const path = file(`${HEAD}spec:\n  thresholdz:\n    human: 0.2\n`);
    expect(await refusal(path)).toBe(`policy ${path}:6: spec: Unrecognized key: "thresholdz"`);
  });

  it('a file that is not a mapping is refused as before', async () => {
    expect(await refusal(file('just text\n'))).toMatch(/: Invalid input: expected object, received string$/);
  });
});

describe('policy show and policy check', () => {
  it('show: the effective policy, every value commented with its origin', async () => {
    const path = file(`${HEAD}spec:\n  thresholds:\n    human: 0.2\n  files:\n    roots: [/srv/ws]\n`);
    const loaded = await loadPolicyLayers({ path, baseDir: dir, env: {} });
    const text = renderEffectivePolicy(loaded, {});
    expect(parseYaml(text)).toEqual(loaded.policy);
    const lines = text.split('\n');
    const line = (start: string) => lines.find((l) => l.trimStart().startsWith(start));
    expect(line('human:')).toMatch(/^ {4}human: 0\.2 # .*mine-\d+\.yaml:7$/);
    expect(line('clarify: 0.6')).toMatch(/# default$/);
    expect(line('roots:')).toMatch(/roots: \[ \/srv\/ws \] # .*mine-\d+\.yaml:9$/);
    expect(line('approverKeys:')).toMatch(/\{\} # built-in$/);
    expect(text).toMatch(/^# policy_sha256 here: [0-9a-f]{64}$/m);
  });

  it('show on the default policy: every value is the default or built-in', async () => {
    const loaded = await loadPolicyLayers({ path: DEFAULT_POLICY_PATH, baseDir: dir, env: {} });
    const comments = renderEffectivePolicy(loaded, {})
      .split('\n')
      .filter((l) => !l.startsWith('#') && / # /.test(l))
      .map((l) => l.slice(l.lastIndexOf(' # ') + 3));
    expect(comments.length).toBeGreaterThan(50);
    expect(new Set(comments)).toEqual(new Set(['default', 'built-in']));
  });

  it('check: what the file changes, and what it repeats of the default', async () => {
    const path = file(
      `${HEAD}spec:\n  thresholds:\n    human: 0.2\n    clarify: 0.6\n` +
        '  riskMatrix:\n' +
        '    - { actionType: memory_write, surface: memory, surfaceArea: 1, actionRisk: 1, tier: no-judge }\n',
    );
    const out = renderChanges(await loadPolicyLayers({ path, baseDir: dir, env: {} }));
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /mine-\d+\.yaml: valid \(CompliancePolicy "mine"\), laid over the default policy; it changes 3 values:$/,
    );
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}metadata\.name +"default" -> "mine" {2}\(line 4\)$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}spec\.thresholds\.human +0\.3 -> 0\.2 {2}\(line 7\)$/));
    const entries = (await defaults()).spec.riskMatrix.length;
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^ {2}spec\\.riskMatrix +${entries} entries -> 1 entry \\(replaces the default list\\) {2}\\(line 9\\)$`,
        ),
      ),
    );
    expect(lines.slice(-2)).toEqual([
      'Same as the default (these lines can be left out):',
      expect.stringMatching(/^ {2}spec\.thresholds\.clarify +0\.6 {2}\(line 8\)$/),
    ]);
  });
});
