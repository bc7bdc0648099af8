/**
 * The hook adapters' contracts: Codex's output validated against Codex's own published JSON Schemas (copied from the
 * released binary, Apache-2.0, test/fixtures/hook-schemas/codex/), Claude Code's and Gemini CLI's fields checked
 * against their documented shapes; inputs read as each runtime sends them; the user's task read from a Claude Code
 * transcript; the proposal's `user_task` filled when the contract has the field.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeCode } from '../../src/hooks/claude-code';
import { codex } from '../../src/hooks/codex';
import { gemini } from '../../src/hooks/gemini';
import { firstUserMessage } from '../../src/hooks/transcript';
import { patchPaths } from '../../src/gate/complete';
import type { Decision } from '../../src/hooks/adapter';
import { userTaskField } from '../../src/gate';

const schemaDir = fileURLToPath(new URL('../fixtures/hook-schemas/codex/', import.meta.url));
const schema = (name: string) => JSON.parse(readFileSync(join(schemaDir, `${name}.schema.json`), 'utf8')) as object;
const ajv = new Ajv({ strict: false });

const ref = { proposalId: 'call-0123456789abcdef0123456789abcdef', workflowId: 'proposal-0123', verdict: null };
const answers: Decision[] = [
  { kind: 'forward', rule: 'r', lease: null },
  { kind: 'deny', reason: 'no', recorded: false, final: true, ...ref },
  { kind: 'clarify', reason: 'why?', roundsLeft: 1, deadline: null, ...ref },
  { kind: 'pending', waitingFor: 'human', status: 'awaiting_human', deadline: null, retryAfterMs: 5000, ...ref },
  { kind: 'refused', reason: 'REJECT (files.roots): x', proposal: null },
];
const opts = { deferWhenHeld: false, terminalApproves: false };

describe('Codex', () => {
  const validate = ajv.compile(schema('pre-tool-use.command.output'));
  const validInput = ajv.compile(schema('pre-tool-use.command.input'));
  it('every answer is valid pre-tool-use output by Codex’s own schema (or no output at all)', () => {
    for (const a of answers) {
      const r = codex.render(a, opts);
      if (a.kind === 'forward') expect(r).toEqual({ exitCode: 0 });
      else {
        expect(validate(r.stdout), JSON.stringify(validate.errors)).toBe(true);
        expect(r.stdout).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
      }
    }
  });
  it('reads the input Codex’s schema describes; apply_patch names its files', () => {
    const input = {
      session_id: 's',
      turn_id: 't',
      transcript_path: null,
      cwd: '/w',
      hook_event_name: 'PreToolUse',
      model: 'm',
      permission_mode: 'default',
      tool_name: 'apply_patch',
      tool_input: {
        command: '*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: b.ts\n*** Move to: c.ts\n*** End Patch',
      },
      tool_use_id: 'u1',
    };
    expect(validInput(input)).toBe(true);
    const e = codex.read(input);
    expect(e).toMatchObject({ kind: 'pre', key: 's:u1', call: { runtime: 'codex', tool: 'apply_patch', cwd: '/w' } });
    expect(patchPaths(input.tool_input.command)).toEqual(['a.txt', 'b.ts', 'c.ts']);
    expect(() => codex.read({ ...input, tool_input: 'rm' })).toThrow(/Codex hook input.*tool_input/);
  });
  it('a failure blocks with exit 2 and a reason on stderr (Codex’s blocking code)', () => {
    expect(codex.block('gate down')).toEqual({
      exitCode: 2,
      stderr: 'agent-judge: gate down; the call was not allowed',
    });
  });
});

describe('Claude Code', () => {
  it('answers permissionDecision allow, or deny with the reason; defer or ask only when asked to', () => {
    const [forward, deny, , pending] = answers;
    expect(claudeCode.render(forward!, opts).stdout).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        permissionDecisionReason: 'agent-judge: allowed (r)',
      },
    });
    const d = claudeCode.render(deny!, opts).stdout as { hookSpecificOutput: Record<string, unknown> };
    expect(Object.keys(d.hookSpecificOutput).sort()).toEqual([
      'hookEventName',
      'permissionDecision',
      'permissionDecisionReason',
    ]);
    expect(d.hookSpecificOutput.permissionDecisionReason).toMatch(
      /^agent-judge REJECT \(agent-judge\): no\. Not performed/,
    );
    const held = (o: typeof opts) =>
      (claudeCode.render(pending!, o).stdout as { hookSpecificOutput: { permissionDecision: string } })
        .hookSpecificOutput.permissionDecision;
    expect(held(opts)).toBe('deny');
    expect(held({ ...opts, deferWhenHeld: true })).toBe('defer');
    expect(held({ deferWhenHeld: true, terminalApproves: true })).toBe('ask');
  });
  it("the Bash description is the agent's statement, not part of the call", () => {
    const base = {
      session_id: 's',
      transcript_path: '/x.jsonl',
      cwd: '/p',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_use_id: 'u',
    };
    const a = claudeCode.read({ ...base, tool_input: { command: 'make', description: 'Build it' } });
    const b = claudeCode.read({ ...base, tool_input: { command: 'make', description: 'Because the user asked' } });
    if (a.kind !== 'pre' || b.kind !== 'pre') throw new Error('expected pre events');
    expect(a.call.arguments).toEqual({ command: 'make' });
    expect(b.call.arguments).toEqual(a.call.arguments);
    expect(a.call.agent).toMatchObject({
      justification: 'Build it',
      cited_evidence: [{ type: 'session', source: 'claude-code session s' }],
    });
    expect(claudeCode.read({ ...base, hook_event_name: 'PostToolUseFailure', tool_input: {}, error: 'boom' })).toEqual({
      kind: 'post',
      key: 's:u',
      outcome: 'tool_error',
      detail: 'boom',
    });
  });
});

describe('Gemini CLI', () => {
  it('answers {decision, reason}; the call is named by session and input (no tool-use id)', () => {
    expect(gemini.render(answers[0]!, opts).stdout).toEqual({ decision: 'allow' });
    expect(gemini.render(answers[1]!, opts).stdout).toMatchObject({
      decision: 'deny',
      reason: expect.any(String) as unknown,
    });
    const input = {
      session_id: 'g',
      transcript_path: '/t',
      cwd: '/p',
      hook_event_name: 'BeforeTool',
      timestamp: '2026-12-01T00:00:00Z',
      tool_name: 'run_shell_command',
      tool_input: { command: 'ls', description: 'List' },
    };
    const pre = gemini.read(input);
    const post = gemini.read({ ...input, hook_event_name: 'AfterTool', tool_response: { llmContent: 'x' } });
    expect(pre.kind === 'pre' && post.kind === 'post' && pre.key === post.key).toBe(true);
    expect(
      gemini.read({ ...input, hook_event_name: 'AfterTool', tool_response: { error: { message: 'no' } } }),
    ).toMatchObject({
      kind: 'post',
      outcome: 'tool_error',
    });
  });
});

describe("the user's task", () => {
  const home = mkdtempSync(join(tmpdir(), 'aj-transcript-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  it("is the first message the user typed, read only from the runtime's transcript folder", () => {
    const dir = join(home, 'projects', 'p');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'session.jsonl');
    writeFileSync(
      file,
      [
        JSON.stringify({ type: 'summary', summary: 'x' }),
        JSON.stringify({ type: 'user', isMeta: true, message: { role: 'user', content: 'caveat' } }),
        JSON.stringify({
          type: 'user',
          message: { role: 'user', content: [{ type: 'text', text: 'Fix the login bug' }] },
        }),
        JSON.stringify({ type: 'user', message: { role: 'user', content: 'later message' } }),
      ].join('\n'),
    );
    expect(firstUserMessage(file, 'claude-code', join(home, 'projects'))).toBe('Fix the login bug');
    const elsewhere = join(home, 'other.jsonl');
    writeFileSync(elsewhere, readFileSync(file));
    expect(firstUserMessage(elsewhere, 'claude-code', join(home, 'projects'))).toBeUndefined();
  });
  it("travels as the proposal's user_task, cut visibly to the field's limit", () => {
    expect(userTaskField('Fix the login bug')).toEqual({ user_task: 'Fix the login bug' });
    expect(userTaskField('   ')).toEqual({});
    const long = userTaskField('x'.repeat(10_000)).user_task!;
    expect(long).toHaveLength(8 * 1024);
    expect(long.endsWith('…')).toBe(true);
  });
});
