/** Approve with edits: which edits narrow an action and pass, and how the others are refused (docs/edits.md). */
import { describe, expect, it } from 'vitest';
import { applyActionEdits, EDITABLE_PARAMETERS, parseEditFlag } from '../../src/contracts/action-edit';
import { proposalContentDigest } from '../../src/contracts/digest';
import { KNOWN_ACTION_TYPES, parseProposal, type Proposal } from '../../src/contracts/proposal';

function p(action_type: string, target: object, parameters: object, extra: object = {}): Proposal {
  return parseProposal({
    proposal_id: 'edit-test',
    agent_id: '@engineering',
    action_type,
    target,
    parameters,
    justification: 'a test',
    ...extra,
  });
}

const pr = p(
  'forgejo_pr_create',
  { repo: 'o/r', branch: 'feat/x', base: 'main' },
  { files_changed: ['src/a.ts'], estimated_diff_lines: 30, title: 'Add a', body: 'A long description of it' },
  { scope_claim: { files_only: ['src/'], max_lines: 80 } },
);

function refusal(proposal: Proposal, edits: Array<{ path: string; value: unknown }>): string {
  const r = applyActionEdits(proposal, edits);
  if (r.ok) throw new Error('expected a refusal');
  return r.refusal.reason;
}

describe('applyActionEdits', () => {
  it('narrows: lower max_lines, files_only inside, a shorter body, a new title; a new digest and every change', () => {
    const r = applyActionEdits(pr, [
      { path: 'scope_claim.max_lines', value: 40 },
      { path: 'scope_claim.files_only', value: ['src/a.ts'] },
      { path: 'parameters.body', value: 'Short' },
      { path: 'parameters.title', value: 'Add a (edited)' },
    ]);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const { proposal, edited } = r.value;
    expect(proposal.scope_claim).toEqual({ files_only: ['src/a.ts'], max_lines: 40 });
    expect(proposal.parameters).toMatchObject({ body: 'Short', title: 'Add a (edited)' });
    expect(edited.from_digest).toBe(proposalContentDigest(pr));
    expect(edited.to_digest).toBe(proposalContentDigest(proposal));
    expect(edited.to_digest).not.toBe(edited.from_digest);
    expect(edited.changes).toContainEqual({ path: 'scope_claim.max_lines', from: 80, to: 40 });
    // The proposal itself is untouched.
    expect(pr.scope_claim.max_lines).toBe(80);
  });

  it('refuses widening edits, naming the field and the rule', () => {
    expect(refusal(pr, [{ path: 'scope_claim.max_lines', value: 200 }])).toMatch(
      /scope_claim\.max_lines: may only be lowered.*200 is more than 80/,
    );
    expect(refusal(pr, [{ path: 'scope_claim.files_only', value: ['src/', 'secrets/'] }])).toMatch(
      /scope_claim\.files_only: may only narrow to paths inside the current list.*secrets/,
    );
    expect(refusal(pr, [{ path: 'scope_claim.files_only', value: ['src/../etc'] }])).toMatch(/files_only/);
    expect(refusal(pr, [{ path: 'parameters.body', value: 'A much, much longer description of it' }])).toMatch(
      /parameters\.body: may only be shortened/,
    );
    expect(refusal(pr, [{ path: 'parameters.body', value: '' }])).toMatch(/may not be emptied/);
    expect(refusal(pr, [{ path: 'scope_claim.no_existing_code_deletion', value: false }])).toMatch(/expected true/);
    const money = p('financial_op', { account: 'ops' }, { amount: 100, currency: 'EUR' });
    expect(refusal(money, [{ path: 'parameters.amount', value: 101 }])).toMatch(
      /parameters\.amount: may only be lowered/,
    );
    expect(refusal(money, [{ path: 'parameters.currency', value: 'USD' }])).toMatch(
      /parameters\.currency: not editable for financial_op \(editable: .*parameters\.amount/,
    );
    expect(refusal(money, [{ path: 'parameters.amount', value: -5 }])).toMatch(/the edited action is not valid/);
  });

  it('shell_command and file_edit bodies are not editable, and say why', () => {
    const shell = p(
      'shell_command',
      { cwd: '/repo' },
      {
        command: 'rm -rf build',
        parsed: { reducible: true, commands: [{ argv: ['rm', '-rf', 'build'], redirects: [] }] },
      },
    );
    expect(refusal(shell, [{ path: 'parameters.command', value: 'rm build' }])).toMatch(
      /parameters\.command: not editable: .*is code: a changed command is another program/,
    );
    const edit = p('file_edit', { paths: ['/repo/a.ts'] }, { change: 'write', content: 'x' });
    expect(refusal(edit, [{ path: 'parameters.content', value: '' }])).toMatch(/not editable: .*new content no judge/);
    expect(EDITABLE_PARAMETERS.shell_command.fields).toEqual({});
  });

  it('an MCP tool call: an argument is replaced by one of the same type, never added; twice or nothing refused', () => {
    const call = p('mcp_tool_call', { server: 'fs', tool: 'write' }, { arguments: { path: 'a.txt', text: 'hello' } });
    const r = applyActionEdits(call, [{ path: 'parameters.arguments.text', value: 'hi' }]);
    expect(r.ok && r.value.proposal.parameters).toEqual({ arguments: { path: 'a.txt', text: 'hi' } });
    expect(refusal(call, [{ path: 'parameters.arguments.mode', value: 'x' }])).toMatch(/never added/);
    expect(refusal(call, [{ path: 'parameters.arguments.text', value: 3 }])).toMatch(/expected a string, got a number/);
    expect(
      refusal(call, [
        { path: 'parameters.arguments.text', value: 'a' },
        { path: 'parameters.arguments.text', value: 'b' },
      ]),
    ).toMatch(/edited twice/);
    expect(refusal(call, [{ path: 'parameters.arguments.text', value: 'hello' }])).toMatch(/change nothing/);
  });

  it("a caller-performed proposal: only an mcp_tool_call's arguments", () => {
    const performed = p(
      'issue_comment',
      { repo: 'o/r', issue: 1 },
      { body: 'a comment' },
      { performer: { by: 'caller', call: 'a'.repeat(64), sequence: 0 } },
    );
    expect(refusal(performed, [{ path: 'parameters.body', value: 'a' }])).toMatch(
      /the caller performs this action from its own call/,
    );
  });

  it('every known action type has a row in the table', () => {
    expect(Object.keys(EDITABLE_PARAMETERS).sort()).toEqual([...KNOWN_ACTION_TYPES].sort());
  });
});

describe('parseEditFlag', () => {
  it('reads JSON when it parses, else text; refuses a flag without =', () => {
    expect(parseEditFlag('scope_claim.max_lines=40')).toEqual({ path: 'scope_claim.max_lines', value: 40 });
    expect(parseEditFlag('parameters.body=Thanks, merged')).toEqual({
      path: 'parameters.body',
      value: 'Thanks, merged',
    });
    expect(parseEditFlag('scope_claim.files_only=["src/a.ts"]')).toEqual({
      path: 'scope_claim.files_only',
      value: ['src/a.ts'],
    });
    expect(() => parseEditFlag('max_lines')).toThrow(/expected path=value/);
  });
});
