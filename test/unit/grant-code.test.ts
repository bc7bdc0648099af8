/**
 * A grant never widens code (docs/grants.md): a pattern grant on an action type that carries code (a shell command,
 * an exec's argv, a file's body or change) must keep that code equal unless the policy lists the type in
 * `spec.grants.allowUnpinnedCode`; and what a grant covers, in the words the inbox and the CLI show before signing.
 */
import { describe, expect, it } from 'vitest';
import { grantDefinitionFor, type GrantScopeChoice } from '../../src/client/grants';
import { describeGrantScope, lifetimeWords } from '../../src/contracts/grant-scope';
import { GrantSettingsSchema } from '../../src/contracts/policy';
import { parseProposal, type Proposal } from '../../src/contracts/proposal';
import { grantCovers, grantedActionOf, refuseGrantByPolicy, refuseUnpinnedCode } from '../../src/policy/grants';
import { proposal, testPolicy } from '../helpers/system';

const policy = testPolicy('/tmp/grant-code-unit', { escalation: { timeout: '5m', approvers: ['scott'] } });
const optedIn = testPolicy('/tmp/grant-code-unit', {
  escalation: { timeout: '5m', approvers: ['scott'] },
  grants: { allowUnpinnedCode: ['shell_command'] },
});

const shell = (command: string, cwd = '/srv/repo', overrides: Record<string, unknown> = {}) =>
  parseProposal(
    proposal('shell_command', {
      target: { cwd },
      parameters: { command, parsed: { reducible: true, commands: [{ argv: command.split(' '), redirects: [] }] } },
      ...overrides,
    }),
  );
const fileEdit = (parameters: Record<string, unknown>, paths = ['/srv/repo/src/a.ts']) =>
  parseProposal(proposal('file_edit', { target: { paths }, parameters }));

const grantOf = (p: Proposal, scope: GrantScopeChoice, extra: { sessionId?: string; maxUses?: number } = {}) =>
  grantDefinitionFor(p, {
    approver: 'scott',
    lifetimeMs: 30 * 60_000,
    maxUses: extra.maxUses ?? 5,
    scope,
    now: new Date('2026-12-03T10:00:00Z'),
    ...(extra.sessionId !== undefined ? { sessionId: extra.sessionId } : {}),
  });
const tierOf = 'full-judge-review' as const;
const reasonOf = (p: Proposal, scope: GrantScopeChoice, under = policy) =>
  refuseGrantByPolicy(under, grantOf(p, scope), tierOf)?.reason ?? null;

describe('a grant never widens code', () => {
  it('refuses a pattern on shell_command that leaves parameters.command free, naming the field and rule', () => {
    const rule =
      'grant on shell_command must keep parameters.command equal (a grant never widens code; ' +
      'spec.grants.allowUnpinnedCode does not list shell_command)';
    // "keep target.cwd the same" and "every path under /srv/repo": what the review found approving `curl | sh`.
    expect(reasonOf(shell('npm test'), { kind: 'pattern', same: ['target.cwd'] })).toBe(rule);
    expect(reasonOf(shell('npm test'), { kind: 'pattern', under: '/srv/repo' })).toBe(rule);
    expect(reasonOf(shell('npm test'), { kind: 'pattern', same: ['parameters.parsed'] })).toBe(rule);
    expect(refuseGrantByPolicy(policy, grantOf(shell('npm test'), { kind: 'pattern', under: '/' }), tierOf)).toEqual({
      code: 'grant.code',
      reason: rule,
    });
    // Pinning the command (with or without the directory) passes; so does the identical action.
    expect(reasonOf(shell('npm test'), { kind: 'pattern', same: ['parameters.command', 'target.cwd'] })).toBeNull();
    expect(reasonOf(shell('npm test'), { kind: 'pattern', same: ['parameters.command'], under: '/srv' })).toBeNull();
    expect(reasonOf(shell('npm test'), { kind: 'identical' })).toBeNull();
  });

  it('holds for exec argv, file bodies and file changes; not for types that carry no code', () => {
    const exec = parseProposal(proposal('exec'));
    expect(reasonOf(exec, { kind: 'pattern', same: ['target.host'] })).toMatch(
      /^grant on exec must keep parameters\.command equal \(a grant never widens code;/,
    );
    expect(reasonOf(exec, { kind: 'pattern', same: ['parameters.command'] })).toBeNull();
    const write = parseProposal(proposal('file_write', { target: { path: '/srv/repo/out.txt' } }));
    expect(reasonOf(write, { kind: 'pattern', under: '/srv/repo' })).toMatch(
      /^grant on file_write must keep parameters\.content equal/,
    );
    expect(reasonOf(write, { kind: 'pattern', same: ['parameters.content'], under: '/srv/repo' })).toBeNull();
    const edit = fileEdit({ change: 'edit', edits: [{ old_string: 'a', new_string: 'b' }] });
    expect(reasonOf(edit, { kind: 'pattern', same: ['target.paths', 'parameters.change'] })).toBe(
      'grant on file_edit must keep parameters.content, parameters.edits or parameters.patch (whichever it carries) ' +
        'equal (a grant never widens code; spec.grants.allowUnpinnedCode does not list file_edit)',
    );
    expect(reasonOf(edit, { kind: 'pattern', same: ['parameters.edits'], under: '/srv/repo' })).toBeNull();
    const payment = parseProposal(proposal('financial_op'));
    expect(reasonOf(payment, { kind: 'pattern', same: ['target.account'] })).toBeNull();
  });

  it('a grant pinning some of a file change covers no call that carries code it does not pin', () => {
    const d = grantOf(fileEdit({ change: 'write', content: 'x = 1\n' }), {
      kind: 'pattern',
      same: ['parameters.content'],
      under: '/srv/repo',
    });
    expect(grantCovers(d, grantedActionOf(fileEdit({ change: 'write', content: 'x = 1\n' }, ['/srv/repo/b.ts'])))).toBe(
      true,
    );
    expect(grantCovers(d, grantedActionOf(fileEdit({ change: 'write', content: 'x = 2\n' })))).toBe(false);
    // The same content with a patch besides: the patch is code the grant never saw.
    const withPatch = fileEdit({
      change: 'patch',
      content: 'x = 1\n',
      patch: '--- a\n+++ b\n@@ -1 +1 @@\n-x\n+rm -rf ~\n',
    });
    expect(grantCovers(d, grantedActionOf(withPatch))).toBe(false);
  });

  it("a pattern covers no call carrying tool input it does not pin (the runtime's unmapped_input)", () => {
    const p = shell('npm test');
    const d = grantOf(p, { kind: 'pattern', same: ['parameters.command', 'target.cwd'] });
    const action = grantedActionOf(p);
    expect(grantCovers(d, action)).toBe(true);
    const withInput = { ...action, parameters: { ...action.parameters, unmapped_input: { run_in_background: true } } };
    expect(grantCovers(d, withInput)).toBe(false);
  });

  it('spec.grants.allowUnpinnedCode lets the types it lists have pattern grants over any code, and only those', () => {
    expect(reasonOf(shell('npm test'), { kind: 'pattern', same: ['target.cwd'] }, optedIn)).toBeNull();
    expect(reasonOf(parseProposal(proposal('exec')), { kind: 'pattern', same: ['target.host'] }, optedIn)).toMatch(
      /^grant on exec must keep parameters\.command equal/,
    );
    expect(GrantSettingsSchema.parse(undefined).allowUnpinnedCode).toEqual([]);
    expect(GrantSettingsSchema.parse({}).allowUnpinnedCode).toEqual([]);
    const bad = GrantSettingsSchema.safeParse({ allowUnpinnedCode: ['financial_op'] });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['allowUnpinnedCode', 0]);
    // The rule alone, as the CLI asks it before anything is signed.
    const cwdOnly = grantOf(shell('npm test'), { kind: 'pattern', same: ['target.cwd'] });
    expect(refuseUnpinnedCode(policy.spec.grants, cwdOnly)?.code).toBe('grant.code');
    expect(refuseUnpinnedCode(optedIn.spec.grants, cwdOnly)).toBeNull();
  });
});

describe('what a grant covers, in words', () => {
  it('says the command exactly, the directory, the session, the lifetime and the uses', () => {
    const p = shell('npm test', '/srv/repo', { session_id: 's-1' });
    const d = grantOf(p, { kind: 'pattern', same: ['parameters.command', 'target.cwd'] }, { sessionId: 's-1' });
    expect(describeGrantScope(d, p)).toBe(
      'shell_command by @engineering: the command "npm test" exactly, in /srv/repo (that directory only); other ' +
        'fields may differ; only in session s-1 (this session); for 30 minutes (until 2026-12-03T10:30:00.000Z); ' +
        'at most 5 uses',
    );
  });

  it('an identical grant says what it is identical to, given the proposal; its digest otherwise', () => {
    const p = shell('npm test');
    const d = grantOf(p, { kind: 'identical' }, { maxUses: 1 });
    expect(describeGrantScope(d, p)).toBe(
      'shell_command by @engineering: only the identical action: the command "npm test" exactly, in /srv/repo ' +
        '(that directory only); in any session; for 30 minutes (until 2026-12-03T10:30:00.000Z); at most 1 use',
    );
    expect(describeGrantScope(d)).toMatch(
      /^shell_command by @engineering: only the identical action \(sha256 [0-9a-f]{12}…\);/,
    );
    // Another proposal than the grant's: its fields are not claimed.
    expect(describeGrantScope(d, shell('rm -rf ~'))).not.toContain('rm -rf');
  });

  it('a pattern the policy lets leave code free says so in capitals', () => {
    const d = grantOf(shell('npm test'), { kind: 'pattern', under: '/srv/repo' });
    expect(describeGrantScope(d)).toBe(
      'shell_command by @engineering: ANY command (not pinned: spec.grants.allowUnpinnedCode lets this grant approve ' +
        'any code), every path anywhere under /srv/repo; other fields may differ; in any session; for 30 minutes ' +
        '(until 2026-12-03T10:30:00.000Z); at most 5 uses',
    );
  });

  it("quotes the agent's text: no line breaks, control or direction characters, long values cut", () => {
    const hostile = 'npm test\n\u001b[2Kok \u202eevil';
    const d = grantOf(shell(hostile, '/srv/my repo'), { kind: 'pattern', same: ['parameters.command', 'target.cwd'] });
    const words = describeGrantScope(d);
    expect(words).toContain('the command "npm test\\n\\u001b[2Kok \\u202eevil" exactly, in "/srv/my repo"');
    // eslint-disable-next-line no-control-regex
    expect(words).not.toMatch(/[\u0000-\u001f\u007f\u202a-\u202e]/);
    const long = grantOf(fileEdit({ change: 'write', content: 'x'.repeat(5000) }), {
      kind: 'pattern',
      same: ['parameters.content'],
    });
    expect(describeGrantScope(long)).toMatch(/the content "x{99}… \(5000 characters in all\) exactly/);
  });

  it('lifetimes in whole units', () => {
    expect(lifetimeWords(30 * 60_000)).toBe('30 minutes');
    expect(lifetimeWords(90 * 60_000)).toBe('1 hour 30 minutes');
    expect(lifetimeWords(8 * 3_600_000)).toBe('8 hours');
    expect(lifetimeWords(86_400_000 + 1000)).toBe('1 day 1 second');
    // Two units at most: the expiry beside it is exact.
    expect(lifetimeWords(86_400_000 + 2 * 3_600_000 + 5 * 60_000)).toBe('1 day 2 hours');
    expect(lifetimeWords(45_000)).toBe('45 seconds');
  });
});
