import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { durationMs, type CompliancePolicy } from '../../src/contracts/policy';
import { PolicyError } from '../../src/contracts/errors';
import { isShadow, quorumFor, tierFor } from '../../src/policy/classify';
import { DEFAULT_POLICY_PATH, loadPolicy } from '../../src/policy/load';
import { testPolicy } from '../helpers/system';

let dir: string;
let policy: CompliancePolicy;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agent-judge-policy-'));
  policy = await loadPolicy({ path: DEFAULT_POLICY_PATH, baseDir: dir, env: {} });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A pattern rule as written in YAML; the tests put invalid values in on purpose. */
type RawRule = { name: string; pattern: unknown; field?: string };

/**
 * The default policy as the YAML reader gives it, typed only as far as the tests reach into it;
 * leaves are `unknown` because the tests break them one field at a time, on purpose.
 */
interface RawPolicy {
  kind: string;
  metadata: { name: string };
  spec: {
    escalation: Record<string, unknown>;
    riskMatrix: Array<Record<string, unknown>>;
    lightweight: { deny: RawRule[]; topics: Record<string, RawRule[]> };
    clarify: Record<string, unknown>;
    exec: { allowlist: unknown[] };
    [field: string]: unknown;
  };
}

/** The default policy as plain data, to be broken one field at a time. */
function rawDefault(): RawPolicy {
  return parseYaml(readFileSync(DEFAULT_POLICY_PATH, 'utf8')) as RawPolicy;
}

let fileCount = 0;
function writePolicy(content: string | RawPolicy): string {
  const file = join(dir, `policy-${++fileCount}.yaml`);
  writeFileSync(file, typeof content === 'string' ? content : toYaml(content));
  return file;
}

/** Loads a policy expected to be refused; returns the PolicyError's message. */
async function refusal(content: string | RawPolicy, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const file = writePolicy(content);
  const err = await loadPolicy({ path: file, baseDir: dir, env }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'the policy was accepted').toBeInstanceOf(PolicyError);
  const message = (err as PolicyError).message;
  expect(message).toContain(file);
  return message;
}

describe('the default policy (seed 000 §2)', () => {
  it.each([
    ['memory_write', 'no-judge'],
    ['vault_note_create', 'lightweight-approval'],
    ['issue_comment', 'lightweight-approval'],
    ['discord_message', 'full-judge-review'],
    ['forgejo_pr_create', 'full-judge-review'],
    ['file_write', 'full-judge-review'],
    ['exec', 'full-judge-review'],
    ['web_publish', 'full-judge-review'],
    ['financial_op', 'human-only'],
    ['impersonation', 'human-only'],
    ['credential_rotation', 'human-only'],
  ])('%s is %s', (type, tier) => {
    expect(tierFor(policy, type)).toBe(tier);
  });

  it('sends action types it does not list to a human (deny by default)', () => {
    expect(policy.spec.defaultTier).toBe('human-only');
    expect(tierFor(policy, 'deploy_to_production')).toBe('human-only');
    expect(tierFor(policy, 'memory_write_v2')).toBe('human-only');
  });

  it('holds the thresholds, clarify rounds and timeouts of the issue', () => {
    expect(policy.spec.thresholds).toEqual({ clarify: 0.6, human: 0.3 });
    expect(policy.spec.clarify.maxRounds).toBe(2);
    expect(durationMs(policy.spec.clarify.timeout)).toBe(3_600_000);
    expect(durationMs(policy.spec.escalation.timeout)).toBe(86_400_000);
    expect(quorumFor(policy, 'human-only')).toBe(1);
    expect(quorumFor(policy, 'full-judge-review')).toBe(1);
  });

  it('allows only echo, ls and git status|log|diff', () => {
    expect(policy.spec.exec.allowlist.map((e) => [e.command, e.subcommands ?? null])).toEqual([
      ['echo', null],
      ['ls', null],
      ['git', ['status', 'log', 'diff']],
    ]);
    // echo's arguments are text; ls and git arguments are paths confined to cwdRoots, with exact options.
    expect(policy.spec.exec.allowlist.map((e) => e.pathArgs)).toEqual([false, true, true]);
    const git = policy.spec.exec.allowlist[2]!;
    expect(git.options).toContain('--stat');
    expect(git.options).not.toContain('--ext-diff');
  });

  it('has no approvers, no shadow surfaces and no webhook routes unless configured', () => {
    expect(policy.spec.escalation.approvers).toEqual([]);
    expect(policy.spec.shadow).toEqual([]);
    expect(isShadow(policy, 'exec')).toBe(false);
    expect(policy.spec.webhook.routes).toEqual({});
  });

  it('makes relative roots absolute against baseDir', () => {
    expect(policy.spec.files.roots).toEqual([join(dir, '.agent-judge/workspace')]);
    expect(policy.spec.exec.cwdRoots).toEqual([join(dir, '.agent-judge/workspace')]);
    expect(policy.spec.memory.dir).toBe(join(dir, '.agent-judge/memory'));
    for (const p of [...policy.spec.files.roots, ...policy.spec.exec.cwdRoots, policy.spec.memory.dir])
      expect(isAbsolute(p)).toBe(true);
  });

  it('keeps absolute roots as written', async () => {
    const raw = rawDefault();
    raw.spec.files = { roots: ['/srv/agent-out', 'relative/out'] };
    const p = await loadPolicy({ path: writePolicy(raw), baseDir: dir, env: {} });
    expect(p.spec.files.roots).toEqual(['/srv/agent-out', join(dir, 'relative/out')]);
  });

  it('is found through AGENT_JUDGE_POLICY when no path is given', async () => {
    const raw = rawDefault();
    raw.metadata.name = 'from-env';
    const p = await loadPolicy({ baseDir: dir, env: { AGENT_JUDGE_POLICY: writePolicy(raw) } });
    expect(p.metadata.name).toBe('from-env');
  });
});

describe('AGENT_JUDGE_APPROVERS', () => {
  it('adds approvers (comma-separated, trimmed, without duplicates) to those in the file', async () => {
    const raw = rawDefault();
    raw.spec.escalation.approvers = ['alice'];
    const p = await loadPolicy({
      path: writePolicy(raw),
      baseDir: dir,
      env: { AGENT_JUDGE_APPROVERS: ' scott, discord:1234 ,,alice' },
    });
    expect(p.spec.escalation.approvers).toEqual(['alice', 'scott', 'discord:1234']);
  });

  it('refuses an invalid approver id, naming the variable', async () => {
    const err = await loadPolicy({
      path: DEFAULT_POLICY_PATH,
      baseDir: dir,
      env: { AGENT_JUDGE_APPROVERS: 'scott,bad id' },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PolicyError);
    expect((err as Error).message).toBe('AGENT_JUDGE_APPROVERS: "bad id" is not a valid approver id');
  });
});

describe('a bad policy is refused, naming the field', () => {
  it('wrong kind', async () => {
    const raw = rawDefault();
    raw.kind = 'Policy';
    expect(await refusal(raw)).toMatch(/: kind: Invalid input: expected "CompliancePolicy"$/);
  });

  it('a tier typo in the risk matrix', async () => {
    const raw = rawDefault();
    raw.spec.riskMatrix[2]!.tier = 'lightweight';
    expect(await refusal(raw)).toMatch(
      /spec\.riskMatrix\.2\.tier: Invalid option: expected one of .*"lightweight-approval"/,
    );
  });

  it('defaultTier no-judge (unknown actions must never pass unreviewed)', async () => {
    const raw = rawDefault();
    raw.spec.defaultTier = 'no-judge';
    expect(await refusal(raw)).toMatch(
      /spec\.defaultTier: Invalid option: expected one of "human-only"\|"full-judge-review"/,
    );
  });

  it('a pattern that is not a regular expression', async () => {
    const raw = rawDefault();
    raw.spec.lightweight.deny[1]!.pattern = 'AKIA[0-9A-Z{16}(';
    expect(await refusal(raw)).toMatch(/spec\.lightweight\.deny\.1\.pattern: expected a valid regular expression/);
  });

  it('a topic pattern that is not a regular expression', async () => {
    const raw = rawDefault();
    raw.spec.lightweight.topics.vault_note_create![0]!.pattern = '(?<unclosed';
    expect(await refusal(raw)).toMatch(
      /spec\.lightweight\.topics\.vault_note_create\.0\.pattern: expected a valid regular expression/,
    );
  });

  it.each([['1 fortnight'], ['-5m'], ['soon'], [0]])('the duration %j', async (value) => {
    const raw = rawDefault();
    raw.spec.clarify.timeout = value;
    expect(await refusal(raw)).toMatch(/spec\.clarify\.timeout: /);
  });

  it('an action type listed twice', async () => {
    const raw = rawDefault();
    raw.spec.riskMatrix.push({ ...raw.spec.riskMatrix[8], tier: 'no-judge' });
    expect(await refusal(raw)).toMatch(/spec\.riskMatrix: action type financial_op is listed twice$/);
  });

  it('shadow mode on a human-only action type (including an unknown one)', async () => {
    const raw = rawDefault();
    raw.spec.shadow = ['financial_op'];
    expect(await refusal(raw)).toMatch(/spec\.shadow: financial_op is human-only and cannot run in shadow mode$/);
    const unknown = rawDefault();
    unknown.spec.shadow = ['deploy_thing'];
    expect(await refusal(unknown)).toMatch(/spec\.shadow: deploy_thing is human-only/);
  });

  it('shadow mode on a judged action type is accepted', async () => {
    const raw = rawDefault();
    raw.spec.shadow = ['discord_message'];
    const p = await loadPolicy({ path: writePolicy(raw), baseDir: dir, env: {} });
    expect(isShadow(p, 'discord_message')).toBe(true);
    expect(isShadow(p, 'exec')).toBe(false);
  });

  it('a human threshold above the clarify threshold', async () => {
    const raw = rawDefault();
    raw.spec.thresholds = { clarify: 0.3, human: 0.6 };
    expect(await refusal(raw)).toMatch(/spec\.thresholds: thresholds\.human must not be above thresholds\.clarify$/);
  });

  it('a threshold outside 0..1', async () => {
    const raw = rawDefault();
    raw.spec.thresholds = { clarify: 1.5, human: 0.3 };
    expect(await refusal(raw)).toMatch(/spec\.thresholds\.clarify: Too big/);
  });

  it('an unknown field (typo) in spec', async () => {
    const raw = rawDefault();
    raw.spec.approvers = ['scott'];
    expect(await refusal(raw)).toMatch(/spec: Unrecognized key: "approvers"/);
  });

  it('an exec allowlist entry that is not a bare program name', async () => {
    const raw = rawDefault();
    raw.spec.exec.allowlist.push({ command: '/bin/sh' });
    expect(await refusal(raw)).toMatch(/spec\.exec\.allowlist\.3\.command: expected a bare program name/);
  });

  it('an invalid approver id in the file', async () => {
    const raw = rawDefault();
    raw.spec.escalation.approvers = ['scott', 'not valid'];
    expect(await refusal(raw)).toMatch(/spec\.escalation\.approvers\.1: expected an approver id/);
  });

  it('text that is not YAML', async () => {
    expect(await refusal('spec: [unclosed\n  - : :')).toMatch(/: not valid YAML \(line 1, column 8: /);
    expect(await refusal('kind: CompliancePolicy\nspec:\n  a: 1\n   b: 2\n')).toMatch(
      /: not valid YAML \(line 3, column 6: Nested mappings are not allowed in compact mappings\)$/,
    );
  });

  it('YAML that is not a mapping, in one readable line', async () => {
    const message = await refusal('just a string\n');
    expect(message).toMatch(/^policy \S+: Invalid input: expected object, received string$/);
    expect(await refusal('')).toMatch(/^policy \S+: Invalid input: expected object/);
  });

  it('a missing file', async () => {
    const file = join(dir, 'nowhere.yaml');
    const err = await loadPolicy({ path: file, env: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PolicyError);
    expect((err as Error).message).toMatch(new RegExp(`^policy ${file}: cannot read the file \\(ENOENT`));
  });
});

describe('roots that would expose agent-judge state', () => {
  it('executor heartbeat timeout: 10s by default, bounded, a bad value named', () => {
    const base = mkdtempSync(join(tmpdir(), 'aj-hb-'));
    expect(testPolicy(base).spec.execution.heartbeatTimeout).toBe('10s');
    expect(testPolicy(base, { execution: { heartbeatTimeout: '3s' } }).spec.execution.heartbeatTimeout).toBe('3s');
    expect(() => testPolicy(base, { execution: { heartbeatTimeout: '500ms' } })).toThrow(
      /spec\.execution\.heartbeatTimeout.*between 1s and 10m/,
    );
    expect(() => testPolicy(base, { execution: { heartbeatTimeout: 'soon' } })).toThrow(
      /spec\.execution\.heartbeatTimeout.*expected a duration/,
    );
    rmSync(base, { recursive: true, force: true });
  });

  it('refuses file roots that contain the memory store or the execution ledger', () => {
    const base = '/srv/aj';
    expect(() => testPolicy(base, { files: { roots: ['.'] } })).toThrow(
      /spec\.files\.roots: \/srv\/aj contains spec\.memory\.dir/,
    );
    expect(() =>
      testPolicy(base, { files: { roots: ['.agent-judge'] }, memory: { dir: '/var/lib/aj-memory' } }),
    ).toThrow(/contains \/srv\/aj\/\.agent-judge, where the execution ledger lives/);
    expect(testPolicy(base).spec.files.roots).toEqual(['/srv/aj/.agent-judge/workspace']);
  });
});
