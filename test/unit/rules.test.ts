import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompliancePolicy } from '../../src/contracts/policy';
import { parseProposal, type Proposal } from '../../src/contracts/proposal';
import { lightweightCheck } from '../../src/policy/patterns';
import { checkExec, hardRules, type RuleContext } from '../../src/guards/rules';
import { judgeByRules } from '../../src/judge/rules';
import { proposal, testPolicy } from '../helpers/system';

let baseDir: string;
let outside: string;
let policy: CompliancePolicy;
let ctx: RuleContext;
let root: string;

beforeAll(() => {
  baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-rules-'));
  outside = mkdtempSync(join(tmpdir(), 'agent-judge-outside-'));
  policy = testPolicy(baseDir);
  ctx = { policy, baseDir };
  root = policy.spec.files.roots[0]!;
  mkdirSync(root, { recursive: true });
});
afterAll(() => {
  rmSync(baseDir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

function p(type: string, overrides: Record<string, unknown> = {}): Proposal {
  return parseProposal(proposal(type, overrides));
}

/** A forgejo_pr_create with scope `src/schema/`, max 80 lines, and these files. */
function pr(
  files: string[],
  lines = 45,
  scope: Record<string, unknown> = { files_only: ['src/schema/'], max_lines: 80 },
): Proposal {
  return p('forgejo_pr_create', {
    parameters: { files_changed: files, estimated_diff_lines: lines },
    scope_claim: scope,
  });
}

/** Where a command runs by default: the first allowed exec directory. */
function where(): { cwd: string; baseDir: string } {
  return { cwd: policy.spec.exec.cwdRoots[0]!, baseDir };
}

function execOf(command: string[], cwd?: string): Proposal {
  return p('exec', { parameters: { command, ...(cwd !== undefined ? { cwd } : {}) } });
}

describe('judgeByRules: evidence', () => {
  it('asks for clarification naming cited_evidence when none is cited', () => {
    const finding = judgeByRules(p('forgejo_pr_create', { cited_evidence: [] }), ctx);
    expect(finding.verdict).toBe('CLARIFY');
    expect(finding.rule).toBe('evidence.missing');
    expect(finding.reason).toMatch(/^cited_evidence is empty/);
    const { cited_evidence: _omit, ...noEvidence } = proposal('exec');
    expect(judgeByRules(parseProposal(noEvidence), ctx)).toMatchObject({
      verdict: 'CLARIFY',
      rule: 'evidence.missing',
    });
  });

  it('a hard rule wins over missing evidence (deny first)', () => {
    const both = p('exec', { parameters: { command: ['rm', '-rf', '/'] }, cited_evidence: [] });
    expect(judgeByRules(both, ctx)).toMatchObject({ verdict: 'REJECT', rule: 'exec.allowlist' });
  });

  it('approves a PR within its scope, with evidence', () => {
    const finding = judgeByRules(p('forgejo_pr_create'), ctx);
    expect(finding).toEqual({
      verdict: 'APPROVE',
      rule: 'rules.passed',
      reason: 'no rule objects: scope, allowlist and paths are within policy',
    });
  });
});

describe('hardRules: PR scope', () => {
  it('rejects files outside scope_claim.files_only, naming the rule, the scope and the file', () => {
    const finding = hardRules(pr(['src/schema/validator.ts', 'src/auth/login.ts']), ctx);
    expect(finding?.verdict).toBe('REJECT');
    expect(finding?.rule).toBe('scope.files_only');
    expect(finding?.reason).toBe('1 file(s) outside scope_claim.files_only (src/schema/): "src/auth/login.ts"');
  });

  it('finds one bad path hidden among 50 good ones', () => {
    const files = Array.from({ length: 50 }, (_, i) => `src/schema/gen/file${i}.ts`);
    files.splice(37, 0, 'src/schema-evil/backdoor.ts');
    const finding = hardRules(pr(files), ctx);
    expect(finding).toMatchObject({ verdict: 'REJECT', rule: 'scope.files_only' });
    expect(finding?.reason).toContain('"src/schema-evil/backdoor.ts"');
    expect(finding?.reason).toMatch(/^1 file\(s\) outside/);
  });

  it('does not count a sibling directory with the same prefix as inside the scope', () => {
    expect(hardRules(pr(['src/schemas.ts']), ctx)).toMatchObject({ verdict: 'REJECT', rule: 'scope.files_only' });
  });

  it.each([['src/schema/../auth/login.ts'], ['src/schema/../../etc/passwd'], ['src/schema/%2E%2E/%2E%2E/etc/passwd']])(
    'rejects %s, which leaves the scope through .. but stays in the repository',
    (file) => {
      const finding = hardRules(pr(['src/schema/validator.ts', file]), ctx);
      expect(finding).toMatchObject({ verdict: 'REJECT', rule: 'scope.files_only' });
      expect(finding?.reason).toContain(JSON.stringify(file));
    },
  );

  it.each([
    ['dot-dot out of the repository', 'src/schema/../../../etc/passwd'],
    ['percent-encoded dot-dot', 'src%2F..%2F..%2Fetc'],
    ['percent-encoded dots inside the scope', 'src/schema/%2e%2e/%2e%2e/%2e%2e/etc/passwd'],
    ['backslashes', 'src\\schema\\..\\..\\..\\etc\\passwd'],
    ['an absolute path', '/etc/passwd'],
    ['an absolute path that starts like the scope', '/src/schema/validator.ts'],
    ['a bare ..', '..'],
    ['malformed percent-encoding', 'src/schema/%E0%A4%A.ts'],
  ])('rejects %s as escaping the repository root', (_name, file) => {
    const finding = hardRules(pr(['src/schema/validator.ts', file]), ctx);
    expect(finding?.verdict).toBe('REJECT');
    expect(finding?.rule).toBe('scope.path-escape');
    expect(finding?.reason).toBe(`file ${JSON.stringify(file)} escapes the repository root`);
  });

  it('escape is caught even without a files_only scope', () => {
    expect(hardRules(pr(['../outside.ts'], 10, {}), ctx)).toMatchObject({
      verdict: 'REJECT',
      rule: 'scope.path-escape',
    });
  });

  it('normalises harmless spellings of paths inside the scope', () => {
    expect(
      hardRules(pr(['./src/schema/a.ts', 'src//schema/b.ts', 'src/schema/x/../c.ts', 'src\\schema\\d.ts']), ctx),
    ).toBeNull();
  });

  it('rejects estimated_diff_lines above scope_claim.max_lines, and accepts exactly the limit', () => {
    const finding = hardRules(pr(['src/schema/a.ts'], 81), ctx);
    expect(finding).toEqual({
      verdict: 'REJECT',
      rule: 'scope.max_lines',
      reason: 'estimated_diff_lines 81 is above scope_claim.max_lines 80',
    });
    expect(hardRules(pr(['src/schema/a.ts'], 80), ctx)).toBeNull();
  });
});

describe('checkExec and exec rules', () => {
  it.each([
    ['a program not on the allowlist', ['rm', '-rf', '/'], 'exec.allowlist'],
    ['an absolute program path', ['/bin/echo', 'hi'], 'exec.allowlist'],
    ['a shell line as one argv element', ['echo x; rm -rf /'], 'exec.allowlist'],
    ['a shell', ['sh', '-c', 'echo hi'], 'exec.allowlist'],
    ['git push', ['git', 'push', 'origin', 'main'], 'exec.allowlist'],
    ['git without a subcommand', ['git'], 'exec.allowlist'],
    ['git options before the subcommand', ['git', '-c', 'core.pager=sh', 'log'], 'exec.allowlist'],
    ['git diff writing a file', ['git', 'diff', '--output=/tmp/x'], 'exec.risky-option'],
    ['git log with an external diff', ['git', 'log', '-p', '--ext-diff'], 'exec.risky-option'],
    ['git diff with a separate --output value', ['git', 'diff', '--output', '/tmp/x'], 'exec.risky-option'],
    [
      'git diff reading files outside the repository',
      ['git', 'diff', '--no-index', '/etc/shadow', '/dev/null'],
      'exec.risky-option',
    ],
    ['git log with textconv filters', ['git', 'log', '-p', '--textconv'], 'exec.risky-option'],
    // git expands unique abbreviations of long options: `--ext` is `--ext-diff`.
    ['an abbreviated --ext-diff', ['git', 'diff', '--ext', 'a.txt'], 'exec.risky-option'],
    ['an abbreviated --textconv', ['git', 'log', '-p', '--textc'], 'exec.risky-option'],
    ['an abbreviated --no-index', ['git', 'diff', '--no-ind', 'a', 'b'], 'exec.risky-option'],
    ['a signature-checking format', ['git', 'log', '--format=%G?'], 'exec.risky-option'],
    ['an option not on the list', ['git', 'diff', '-Oorder.txt'], 'exec.option'],
    ['ls with an unlisted option', ['ls', '--dereference-command-line'], 'exec.option'],
    // Outside a repository git diff compares any two files: paths must stay inside cwdRoots.
    ['git diff of host files', ['git', 'diff', '/etc/passwd', '/dev/null'], 'exec.path-arg'],
    ['ls of the host root', ['ls', '/'], 'exec.path-arg'],
    ['ls climbing out', ['ls', '-la', '../..'], 'exec.path-arg'],
  ])('rejects %s', (_name, command, rule) => {
    const finding = hardRules(execOf(command), ctx);
    expect(finding?.verdict).toBe('REJECT');
    expect(finding?.rule).toBe(rule);
    expect(checkExec(command, policy, where())?.rule).toBe(rule);
  });

  it('names the allowlist in the reason', () => {
    expect(checkExec(['rm', 'x'], policy, where())?.reason).toBe(
      'command "rm" is not on the exec allowlist (echo, ls, git status|log|diff)',
    );
    expect(checkExec(['git', 'push'], policy, where())?.reason).toBe(
      'git "push" is not allowed; allowed: status, log, diff as the first argument',
    );
  });

  it('rejects an empty argv', () => {
    expect(checkExec([], policy, where())).toMatchObject({
      verdict: 'REJECT',
      rule: 'exec.allowlist',
      reason: 'empty command',
    });
  });

  it.each([
    [['git', 'status']],
    [['git', 'status', '--untracked-files=all']],
    [['git', 'log', '--oneline', '-n', '5']],
    [['git', 'log', 'main..feature', '--stat']],
    [['git', 'diff', '--cached', '--', 'src/a.ts']],
  ])('approves %j in a repository the policy names', (command) => {
    const named = testPolicy(baseDir, {
      exec: { git: { repositories: [{ name: 'workspace', path: '.agent-judge/workspace' }] } },
    });
    expect(checkExec(command, named, where())).toBeNull();
    expect(judgeByRules(execOf(command), { policy: named, baseDir })).toMatchObject({
      verdict: 'APPROVE',
      rule: 'rules.passed',
    });
  });

  it('rejects every git command when the policy names no repository, naming the field', () => {
    const finding = hardRules(execOf(['git', 'status']), ctx);
    expect(finding).toEqual({
      verdict: 'REJECT',
      rule: 'exec.git-repository',
      reason: 'git runs only with its cwd inside a repository spec.exec.git.repositories names (the policy names none)',
    });
    expect(judgeByRules(execOf(['git', 'log', '-p']), ctx)).toMatchObject({
      verdict: 'REJECT',
      rule: 'exec.git-repository',
    });
  });

  it('rejects git with a cwd outside every named repository, listing them', () => {
    const app = join(baseDir, '.agent-judge/workspace/app');
    const named = testPolicy(baseDir, { exec: { git: { repositories: [{ name: 'app', path: app }] } } });
    const cwd = join(baseDir, '.agent-judge/workspace/other');
    expect(checkExec(['git', 'diff'], named, { cwd, baseDir })).toMatchObject({
      rule: 'exec.git-repository',
      reason:
        'git runs only with its cwd inside a repository spec.exec.git.repositories names ' +
        `(app: ${app}); cwd ${JSON.stringify(cwd)} is in none`,
    });
    expect(checkExec(['git', 'diff'], named, { cwd: join(app, 'src'), baseDir })).toBeNull();
  });

  it.each([[['echo', 'hi']], [['echo', '/etc/passwd']], [['ls', '-la']], [['ls', 'notes']], [['echo', 'x; rm -rf /']]])(
    'approves %j',
    (command) => {
      expect(checkExec(command, policy, where())).toBeNull();
      expect(judgeByRules(execOf(command), ctx)).toMatchObject({ verdict: 'APPROVE', rule: 'rules.passed' });
    },
  );

  it('rejects a cwd outside the allowed directories', () => {
    for (const cwd of ['/tmp', '..', '.agent-judge/workspace/../../..', outside]) {
      const finding = hardRules(execOf(['ls'], cwd), ctx);
      expect(finding, cwd).toEqual({
        verdict: 'REJECT',
        rule: 'exec.cwd',
        reason: `cwd ${JSON.stringify(cwd)} is outside the allowed directories`,
      });
    }
  });

  it('accepts a cwd inside the allowed directories, relative or absolute', () => {
    expect(hardRules(execOf(['ls'], '.agent-judge/workspace/sub'), ctx)).toBeNull();
    expect(hardRules(execOf(['ls'], policy.spec.exec.cwdRoots[0]), ctx)).toBeNull();
  });

  it('rejects a cwd that is a symlink inside the root pointing outside', () => {
    const link = join(policy.spec.exec.cwdRoots[0]!, 'cwd-link');
    symlinkSync(outside, link);
    expect(hardRules(execOf(['ls'], link), ctx)).toMatchObject({ verdict: 'REJECT', rule: 'exec.cwd' });
  });
});

describe('file_write paths', () => {
  const fw = (path: string) => p('file_write', { target: { path } });

  it.each([
    ['a repository config', '.agent-judge/workspace/r/.git/config'],
    ['a hook, in upper case', '.agent-judge/workspace/r/.GIT/hooks/pre-commit'],
    ['an attributes file', '.agent-judge/workspace/r/.gitattributes'],
    ['a submodule map', '.agent-judge/workspace/.gitmodules'],
  ])('rejects writing git metadata: %s', (_name, path) => {
    // A planted repository turns read-only git commands into code execution.
    expect(hardRules(fw(path), ctx)).toMatchObject({ verdict: 'REJECT', rule: 'files.git-metadata' });
  });

  it.each([
    ['a HEAD', '.agent-judge/workspace/evil/HEAD'],
    ['a HEAD in lower case', '.agent-judge/workspace/evil/head'],
    ['a file below a folder named HEAD', '.agent-judge/workspace/HEAD/x'],
    ['a packed-refs', '.agent-judge/workspace/evil/packed-refs'],
  ])('rejects a write that gives a folder a repository shape: %s', (_name, path) => {
    expect(hardRules(fw(path), ctx)).toMatchObject({ verdict: 'REJECT', rule: 'files.repository-shape' });
  });

  it.each([
    ['a config file', '.agent-judge/workspace/app/config'],
    ['an index', '.agent-judge/workspace/site/index'],
    ['a file in objects/', '.agent-judge/workspace/src/objects/user.ts'],
    ['a name that contains HEAD', '.agent-judge/workspace/HEADER.md'],
  ])('allows ordinary names: %s', (_name, path) => {
    expect(hardRules(fw(path), ctx)).toBeNull();
  });

  it.each([
    ['a relative path climbing out', '../escape.txt'],
    ['an absolute path outside', '/etc/cron.d/agent'],
    ['dot-dot from inside the root', '.agent-judge/workspace/../../escape.txt'],
    ['the parent of the root', '.agent-judge'],
  ])('rejects %s', (_name, path) => {
    const finding = hardRules(fw(path), ctx);
    expect(finding?.verdict).toBe('REJECT');
    expect(finding?.rule).toBe('files.roots');
    expect(finding?.reason).toBe(`path ${JSON.stringify(path)} resolves outside the allowed roots (${root})`);
  });

  it('rejects a path through a symlink inside the root that points outside', () => {
    symlinkSync(outside, join(root, 'escape-link'));
    const finding = judgeByRules(fw('.agent-judge/workspace/escape-link/owned.txt'), ctx);
    expect(finding).toMatchObject({ verdict: 'REJECT', rule: 'files.roots' });
  });

  it('rejects a dangling symlink inside the root whose target is outside (writing it creates the target)', () => {
    symlinkSync(join(outside, 'not-yet.txt'), join(root, 'file-link.txt'));
    expect(judgeByRules(fw(join(root, 'file-link.txt')), ctx)).toMatchObject({
      verdict: 'REJECT',
      rule: 'files.roots',
    });
    symlinkSync(join(outside, 'no-such-dir'), join(root, 'dir-link'));
    expect(judgeByRules(fw('.agent-judge/workspace/dir-link/x.txt'), ctx)).toMatchObject({
      verdict: 'REJECT',
      rule: 'files.roots',
    });
    // A relative dangling link climbing out.
    symlinkSync('../../../escaped.txt', join(root, 'rel-link.txt'));
    expect(judgeByRules(fw('.agent-judge/workspace/rel-link.txt'), ctx)).toMatchObject({
      verdict: 'REJECT',
      rule: 'files.roots',
    });
  });

  it('rejects a path through a symlink loop', () => {
    symlinkSync(join(root, 'loop-b'), join(root, 'loop-a'));
    symlinkSync(join(root, 'loop-a'), join(root, 'loop-b'));
    expect(judgeByRules(fw('.agent-judge/workspace/loop-a/x.txt'), ctx)).toMatchObject({
      verdict: 'REJECT',
      rule: 'files.roots',
    });
  });

  it('a dangling symlink whose target is inside the root is fine', () => {
    symlinkSync(join(root, 'later.txt'), join(root, 'later-link.txt'));
    expect(hardRules(fw('.agent-judge/workspace/later-link.txt'), ctx)).toBeNull();
  });

  it('approves a new nested file inside the root, relative or absolute', () => {
    expect(judgeByRules(fw('.agent-judge/workspace/a/b/c/new.txt'), ctx)).toMatchObject({
      verdict: 'APPROVE',
      rule: 'rules.passed',
    });
    expect(judgeByRules(fw(join(root, 'reports', 'today.md')), ctx)).toMatchObject({ verdict: 'APPROVE' });
  });

  it('a symlink inside the root pointing elsewhere inside the root is fine', () => {
    mkdirSync(join(root, 'real-dir'), { recursive: true });
    symlinkSync(join(root, 'real-dir'), join(root, 'inner-link'));
    expect(hardRules(fw('.agent-judge/workspace/inner-link/x.txt'), ctx)).toBeNull();
  });
});

describe('lightweightCheck: a field that names an object or an array', () => {
  const withRules = (lightweight: Record<string, unknown>) =>
    testPolicy(baseDir, { lightweight: { ...policy.spec.lightweight, ...lightweight } });
  const secret = { name: 'secret', pattern: 'hunter2', field: 'parameters' };

  it('a deny pattern on `parameters` finds a secret inside the object, naming the leaf', () => {
    const finding = lightweightCheck(
      p('vault_note_create', { parameters: { title: 'notes', content: 'the password is hunter2' } }),
      withRules({ deny: [secret] }),
    );
    expect(finding).toEqual({
      verdict: 'REJECT',
      rule: 'secret',
      reason: 'parameters.content matches deny rule secret',
    });
  });

  it('a deny pattern on `parameters` finds a secret in a nested array element', () => {
    const finding = lightweightCheck(
      p('forgejo_pr_create', {
        parameters: { files_changed: ['src/schema/a.ts', 'src/schema/hunter2.ts'], estimated_diff_lines: 4 },
      }),
      withRules({ deny: [secret] }),
    );
    expect(finding).toEqual({
      verdict: 'REJECT',
      rule: 'secret',
      reason: 'parameters.files_changed[1] matches deny rule secret',
    });
  });

  it('a deny pattern on a number field matches its digits, as before', () => {
    const finding = lightweightCheck(
      p('issue_comment', { target: { repo: 'sscoble/speckl', issue: 1337 } }),
      withRules({ deny: [{ name: 'leet', pattern: '^1337$', field: 'target.issue' }] }),
    );
    expect(finding).toEqual({ verdict: 'REJECT', rule: 'leet', reason: 'target.issue matches deny rule leet' });
  });

  it('a deny pattern on `parameters` lets a clean object through', () => {
    const finding = lightweightCheck(p('vault_note_create'), withRules({ deny: [secret] }));
    expect(finding.verdict).toBe('APPROVE');
  });

  it('a topic rule on an object field allows only when every text in it matches', () => {
    const policy = withRules({
      deny: [],
      topics: { vault_note_create: [{ name: 'vault.main-notes', pattern: '^(main|notes/.*)$', field: 'target' }] },
    });
    expect(lightweightCheck(p('vault_note_create', { target: { vault: 'main', path: 'notes/a.md' } }), policy)).toEqual(
      {
        verdict: 'APPROVE',
        rule: 'vault.main-notes',
        reason: 'matches topic rule vault.main-notes; no deny rule matched',
      },
    );
    const outside = lightweightCheck(
      p('vault_note_create', { target: { vault: 'main', path: 'secrets/a.md' } }),
      policy,
    );
    expect(outside.verdict).toBe('REJECT');
    expect(outside.rule).toBe('topics.no-match');
  });

  it('a field path through prototype keys reads nothing', () => {
    const finding = lightweightCheck(
      p('issue_comment'),
      withRules({ deny: [{ name: 'proto', pattern: 'function|object', field: 'target.constructor' }] }),
    );
    expect(finding.verdict).toBe('APPROVE');
  });
});

describe('lightweightCheck (default policy)', () => {
  it.each([
    [
      'secrets.private-key',
      'parameters.body',
      { parameters: { body: 'here:\n-----BEGIN RSA PRIVATE KEY-----\nMIIE...' } },
    ],
    ['secrets.private-key', 'parameters.body', { parameters: { body: '-----BEGIN OPENSSH PRIVATE KEY-----' } }],
    ['secrets.aws-access-key', 'parameters.body', { parameters: { body: 'use AKIAABCDEFGHIJKLMNOP for the bucket' } }],
    ['secrets.token-assignment', 'parameters.body', { parameters: { body: 'config: api_key = sk_live_0123456789' } }],
    ['secrets.token-assignment', 'parameters.body', { parameters: { body: 'PASSWORD: hunter2hunter2' } }],
    ['mentions.everyone', 'parameters.body', { parameters: { body: 'hey @everyone, ship it' } }],
    ['mentions.everyone', 'parameters.body', { parameters: { body: '@HERE please look' } }],
    ['mentions.everyone', 'justification', { justification: 'tell @everyone' }],
  ])('an issue comment matching %s is rejected, naming the rule and %s', (rule, field, overrides) => {
    const finding = lightweightCheck(p('issue_comment', overrides), policy);
    expect(finding).toEqual({ verdict: 'REJECT', rule, reason: `${field} matches deny rule ${rule}` });
  });

  it('deny rules cover vault notes too, including their path', () => {
    const finding = lightweightCheck(
      p('vault_note_create', { parameters: { content: 'aws AKIAABCDEFGHIJKLMNOP' } }),
      policy,
    );
    expect(finding).toEqual({
      verdict: 'REJECT',
      rule: 'secrets.aws-access-key',
      reason: 'parameters.content matches deny rule secrets.aws-access-key',
    });
  });

  it.each([
    ['outside the allowed folders', 'secrets/keys.md'],
    ['climbing out with ..', 'notes/../secrets/keys.md'],
    ['ending in ..', 'projects/..'],
    ['absolute', '/notes/a.md'],
    ['not markdown', 'notes/run.sh'],
    ['a folder with a prefix of an allowed name', 'notes-old/a.md'],
  ])('a vault note %s is rejected by topics.no-match', (_name, path) => {
    const finding = lightweightCheck(p('vault_note_create', { target: { vault: 'main', path } }), policy);
    expect(finding.verdict).toBe('REJECT');
    expect(finding.rule).toBe('topics.no-match');
    expect(finding.reason).toBe('no topic rule for vault_note_create matches (vault.notes-folder)');
  });

  it.each([['notes/standup.md'], ['inbox/2025-01-01 triage.md'], ['projects/agent-judge/plan.md']])(
    'a clean vault note at %s is approved by the topic rule',
    (path) => {
      expect(lightweightCheck(p('vault_note_create', { target: { vault: 'main', path } }), policy)).toEqual({
        verdict: 'APPROVE',
        rule: 'vault.notes-folder',
        reason: 'matches topic rule vault.notes-folder; no deny rule matched',
      });
    },
  );

  it('a clean issue comment is approved with no rule objecting', () => {
    expect(lightweightCheck(p('issue_comment'), policy)).toEqual({
      verdict: 'APPROVE',
      rule: 'patterns.clean',
      reason: 'no deny rule matched',
    });
  });

  it('short values and words that merely mention tokens are not secrets', () => {
    const finding = lightweightCheck(
      p('issue_comment', { parameters: { body: 'rotate the token: soon. password = short' } }),
      policy,
    );
    expect(finding.verdict).toBe('APPROVE');
  });
});
