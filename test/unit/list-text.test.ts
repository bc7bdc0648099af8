/** `list` and `list --hooks` on a terminal: the tables a person reads (the JSON for scripts is the rows themselves). */
import { describe, expect, it } from 'vitest';
import type { ListedProposal } from '../../src/client/proposals/visibility';
import { renderHookCallTable, renderProposalTable } from '../../src/cli/list-text';
import { proposalSubject } from '../../src/contracts/subject';

const row = (over: Partial<ListedProposal>): ListedProposal => ({
  proposal_id: 'p-1',
  workflow_id: 'proposal-1',
  status: 'awaiting_human',
  agent_id: '@local',
  action_type: 'shell_command',
  tier: 'full-judge-review',
  verdict: null,
  target: 'shell:/work:echo',
  subject: 'echo hi > out.txt (in /work)',
  waiting_for: null,
  audit_flag: false,
  started_at: '2026-12-07T20:41:05.123Z',
  closed_at: null,
  ...over,
});

describe('list on a terminal', () => {
  it('a table with what each proposal is about; an open approval waits for its token', () => {
    const text = renderProposalTable([
      row({}),
      row({ proposal_id: 'p-2', status: 'approved', verdict: 'APPROVE', waiting_for: 'token' }),
    ]);
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^STARTED +STATUS +VERDICT +ACTION +AGENT +PROPOSAL +ABOUT$/);
    expect(lines[1]).toMatch(/^2026-12-07 20:41:05 +awaiting_human +- +shell_command +@local +p-1 +echo hi > out\.txt/);
    expect(lines[2]).toContain('approved, waiting for its token');
    // Columns line up: every row's ABOUT starts where the header's does.
    const at = lines[0]!.indexOf('ABOUT');
    for (const line of lines.slice(1)) expect(line.slice(at)).toMatch(/^echo hi/);
  });

  it("an agent's line break or direction override cannot forge a row", () => {
    const text = renderProposalTable([row({ subject: 'rm -rf /\nfake row\u202e' })]);
    expect(text.trimEnd().split('\n')).toHaveLength(2);
    expect(text).not.toContain('\u202e');
  });

  it('nothing to list says so', () => {
    expect(renderProposalTable([])).toBe('no proposals\n');
    expect(renderHookCallTable([])).toBe('no hook calls decided without a proposal\n');
  });

  it('--hooks: refusals with their reason, calls a rule let run with the rule', () => {
    const text = renderHookCallTable([
      {
        kind: 'hook_refused',
        runtime: 'claude-code',
        agent: '@local',
        tool: 'Write',
        reason: 'REJECT (files.roots)',
        at: '2026-12-07T20:10:32.442Z',
      },
      {
        kind: 'hook_no_judge',
        runtime: 'codex',
        agent: '@local',
        tool: 'Glob',
        rule: 'claude.glob',
        at: '2026-12-07T20:10:25.893Z',
      },
    ]);
    const lines = text.trimEnd().split('\n');
    expect(lines[1]).toMatch(/^2026-12-07 20:10:32 +refused +claude-code +@local +Write +REJECT \(files\.roots\)$/);
    expect(lines[2]).toMatch(/ran \(no judge\) +codex +@local +Glob +claude\.glob$/);
  });
});

describe('what an approver is asked about', () => {
  it('the command, path or URL, not the target key', () => {
    const shell = { action_type: 'shell_command', target: { cwd: '/w' }, parameters: { command: 'echo hi' } };
    expect(proposalSubject(shell)).toBe('echo hi (in /w)');
    expect(
      proposalSubject({ action_type: 'exec', target: { host: 'local' }, parameters: { command: ['git', 'status'] } }),
    ).toBe('git status (on local)');
    expect(proposalSubject({ action_type: 'file_edit', target: { paths: ['/w/a', '/w/b'] }, parameters: {} })).toBe(
      '/w/a, /w/b',
    );
    expect(
      proposalSubject({ action_type: 'web_request', target: { url: 'https://example.org/x' }, parameters: {} }),
    ).toBe('https://example.org/x');
    expect(proposalSubject({ action_type: 'web_request', target: { query: 'weather' }, parameters: {} })).toBe(
      'search: weather',
    );
    expect(
      proposalSubject({
        action_type: 'mcp_tool_call',
        target: { server: 'builtin', tool: 'tool_call' },
        parameters: { arguments: { b: 1, a: 'x' } },
      }),
    ).toBe('builtin/tool_call {"a":"x","b":1}');
    expect(proposalSubject({ action_type: 'financial_op', target: { account: 'acme' }, parameters: {} })).toBe(
      'financial_op {"account":"acme"}',
    );
    // Malformed fields never throw: the type and target instead.
    expect(proposalSubject({ action_type: 'shell_command', target: { cwd: 3 }, parameters: { command: 7 } })).toBe(
      'shell_command {"cwd":3}',
    );
    expect(proposalSubject({ ...shell, parameters: { command: 'x'.repeat(600) } })).toMatch(
      /… \(\d+ more characters\)$/,
    );
  });
});

describe('the inbox card', () => {
  it('says what the approver is asked about: the command, escaped as agent text', async () => {
    const { inboxPage } = await import('../../src/inbox/pages');
    const status = {
      workflow_id: 'proposal-1',
      status: 'awaiting_human',
      decisions: [],
      approvals_needed: 1,
      deadlines: { human: null, clarification: null },
      proposal: {
        agent_id: '@local',
        action_type: 'shell_command',
        target: { cwd: '/w' },
        parameters: { command: 'echo <b>hi</b> > out.txt' },
      },
    } as unknown as Parameters<typeof inboxPage>[2][number]['status'];
    const { html } = inboxPage('scott', 'csrf', [{ status, decidedByMe: false }]);
    expect(html).toContain('about');
    expect(html).toContain('echo &lt;b&gt;hi&lt;/b&gt; &gt; out.txt (in /w)');
    expect(html).not.toContain('<b>hi</b>');
  });
});
