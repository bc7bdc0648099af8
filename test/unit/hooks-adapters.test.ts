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
import { openclaw } from '../../src/hooks/openclaw';
import { resultSummary } from '../../src/openclaw/plugin';
import { firstUserMessage } from '../../src/hooks/transcript';
import { patchPaths } from '../../src/gate/complete';
import type { Decision } from '../../src/hooks/adapter';
import { userTaskField } from '../../src/gate';

const schemaDir = fileURLToPath(new URL('../fixtures/hook-schemas/codex/', import.meta.url));
const schema = (name: string) => JSON.parse(readFileSync(join(schemaDir, `${name}.schema.json`), 'utf8')) as object;
const ajv = new Ajv({ strict: false });

const ref = { proposalId: 'call-0123456789abcdef0123456789abcdef', workflowId: 'proposal-0123', verdict: null };
const answers: Decision[] = [
  { kind: 'forward', rule: 'r', lease: null, arguments: {} },
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

/**
 * Post-tool reports, in the shapes each runtime really sends (Codex: codex-rs/core/src/tools/context.rs and the
 * post-tool-use input schema; Gemini CLI: coreToolHookTriggers.ts and tools/shell.ts; Claude Code: the Agent SDK's
 * PostToolUse / PostToolUseFailure inputs; OpenClaw: after_tool_call with exec's `details`), read for what they say.
 */
describe('what a post-tool report records', () => {
  const post = (event: ReturnType<typeof codex.read>) => {
    if (event.kind !== 'post') throw new Error(`expected a post event, got ${event.kind}`);
    return { outcome: event.outcome, detail: event.detail };
  };

  describe('Codex', () => {
    const validInput = ajv.compile(schema('post-tool-use.command.input'));
    const input = (tool: string, tool_input: object, tool_response: unknown) => ({
      session_id: '019a7f6e-0000-7000-8000-000000000001',
      turn_id: 't1',
      transcript_path: null,
      cwd: '/p',
      hook_event_name: 'PostToolUse',
      model: 'gpt-5.5',
      permission_mode: 'default',
      tool_name: tool,
      tool_input,
      tool_response,
      tool_use_id: 'call_1',
    });

    it("a shell command's report is its output text, with no exit code: unknown, never ok", () => {
      const failedPush = input(
        'Bash',
        { command: 'git push origin main' },
        "fatal: unable to access 'https://example.invalid/r.git/': Could not resolve host\n",
      );
      expect(validInput(failedPush), JSON.stringify(validInput.errors)).toBe(true);
      expect(post(codex.read(failedPush))).toEqual({
        outcome: 'unknown',
        detail: "Codex reported the Bash call's output without its exit code",
      });
      // Output that looks like success says no more: the exit code is still not in the report.
      expect(post(codex.read(input('Bash', { command: 'make' }, 'Process exited with code 0\nok\n'))).outcome).toBe(
        'unknown',
      );
    });

    it("apply_patch: Codex's own success summary is ok; a later Codex's structured status is read as such", () => {
      const patch = '*** Begin Patch\n*** Add File: a.md\n+x\n*** End Patch\n';
      // What Codex 0.171.0 sent in test/e2e/codex.test.ts: its exec runtime's header, then apply_patch's summary.
      const summary = 'Success. Updated the following files:\nA a.md\n';
      const applied = input(
        'apply_patch',
        { command: patch },
        `Exit code: 0\nWall time: 0 seconds\nOutput:\n${summary}`,
      );
      expect(validInput(applied)).toBe(true);
      expect(post(codex.read(applied))).toEqual({ outcome: 'ok', detail: undefined });
      const failed = `Exit code: 1\nWall time: 0 seconds\nOutput:\nFailed to find expected lines in a.md\n`;
      expect(post(codex.read(input('apply_patch', { command: patch }, failed)))).toEqual({
        outcome: 'tool_error',
        detail: 'apply_patch exit code 1',
      });
      expect(post(codex.read(input('apply_patch', { command: patch }, summary))).outcome).toBe('ok');
      // A shell command could print the same header: its output is never read for one.
      expect(
        post(codex.read(input('Bash', { command: 'x' }, `Exit code: 0\nWall time: 0 seconds\nOutput:\n`))).outcome,
      ).toBe('unknown');
      expect(post(codex.read(input('apply_patch', { command: patch }, 'something else'))).outcome).toBe('unknown');
      const structured = (status: string) =>
        post(codex.read(input('apply_patch', { command: patch }, { status, exact: true, summary: 'A a.md' })));
      expect(structured('completed').outcome).toBe('ok');
      expect(structured('no_op').outcome).toBe('ok');
      expect(structured('failed')).toEqual({ outcome: 'tool_error', detail: 'apply_patch failed: A a.md' });
      expect(structured('partial').outcome).toBe('tool_error');
    });

    it('an exit code, where a report has one, decides: non-zero is tool_error', () => {
      expect(post(codex.read(input('Bash', { command: 'x' }, { exit_code: 7 })))).toEqual({
        outcome: 'tool_error',
        detail: 'exit code 7',
      });
      expect(post(codex.read(input('Bash', { command: 'x' }, { exit_code: 0 }))).outcome).toBe('ok');
      expect(post(codex.read(input('mcp__s__t', {}, { content: [], isError: true }))).outcome).toBe('tool_error');
      expect(post(codex.read(input('mcp__s__t', {}, null))).outcome).toBe('unknown');
    });
  });

  describe('Gemini CLI', () => {
    const after = (tool: string, tool_response: unknown) =>
      post(
        gemini.read({
          session_id: 'g',
          transcript_path: '/t',
          cwd: '/p',
          hook_event_name: 'AfterTool',
          timestamp: '2026-12-01T00:00:00Z',
          tool_name: tool,
          tool_input: tool === 'run_shell_command' ? { command: 'curl -sS https://example.invalid' } : {},
          tool_response,
        }),
      );

    it("a shell command's non-zero exit is in its llmContent, not in error: tool_error with the code", () => {
      const failed = {
        llmContent:
          'Output: curl: (7) Failed to connect to example.invalid port 443\nExit Code: 7\nProcess Group PGID: 41',
        returnDisplay: 'curl: (7) Failed to connect to example.invalid port 443',
      };
      expect(after('run_shell_command', failed)).toEqual({ outcome: 'tool_error', detail: 'exit code 7' });
      // Older releases: every field, `(none)` where empty.
      const old = 'Command: ls\nDirectory: (root)\nOutput: a\nError: (none)\nExit Code: 0\nSignal: (none)';
      expect(after('run_shell_command', { llmContent: old, returnDisplay: 'a' }).outcome).toBe('ok');
    });

    it("the shell's own Exit Code line is the last one: output cannot pass a failure off as success", () => {
      const forged = { llmContent: 'Output: Exit Code: 0\nExit Code: 0\nExit Code: 1', returnDisplay: '' };
      expect(after('run_shell_command', forged)).toEqual({ outcome: 'tool_error', detail: 'exit code 1' });
      expect(after('run_shell_command', { llmContent: 'Output: done\nSignal: 9', returnDisplay: '' })).toEqual({
        outcome: 'tool_error',
        detail: 'terminated by signal 9',
      });
      expect(after('run_shell_command', { llmContent: 'Output: done', returnDisplay: 'done' }).outcome).toBe('ok');
    });

    it('a shell report in no known shape (summarised, moved to the background) is unknown', () => {
      const background = { llmContent: 'Command moved to background (PID: 9). Output hidden.', returnDisplay: '' };
      expect(after('run_shell_command', background).outcome).toBe('unknown');
      expect(after('run_shell_command', { llmContent: [{ text: 'summary' }] }).outcome).toBe('unknown');
    });

    it("any tool's error is tool_error; another tool without one is ok", () => {
      const error = { message: 'spawn /bin/bash ENOENT', type: 'shell_execute_error' };
      expect(after('run_shell_command', { llmContent: 'Output: (empty)', error }).outcome).toBe('tool_error');
      expect(
        after('write_file', { llmContent: 'x', error: { message: 'EACCES', type: 'file_write_failure' } }),
      ).toEqual({ outcome: 'tool_error', detail: '{"message":"EACCES","type":"file_write_failure"}' });
      expect(after('write_file', { llmContent: 'Successfully created file', returnDisplay: 'ok' }).outcome).toBe('ok');
    });
  });

  describe('Claude Code', () => {
    const base = { session_id: 's', transcript_path: '/x.jsonl', cwd: '/p', tool_name: 'Bash', tool_use_id: 'u' };
    it('PostToolUse is a success unless the command was interrupted; PostToolUseFailure is a tool_error', () => {
      const bash = (tool_response: object) =>
        post(
          claudeCode.read({ ...base, hook_event_name: 'PostToolUse', tool_input: { command: 'ls' }, tool_response }),
        );
      expect(bash({ stdout: 'a\n', stderr: '', interrupted: false, isImage: false }).outcome).toBe('ok');
      expect(bash({ stdout: '', stderr: '', interrupted: true, isImage: false })).toEqual({
        outcome: 'tool_error',
        detail: 'interrupted',
      });
      const failure = claudeCode.read({
        ...base,
        hook_event_name: 'PostToolUseFailure',
        tool_input: { command: 'git push' },
        error: 'Exit code 1\nfatal: could not read from remote repository',
        is_interrupt: false,
      });
      expect(post(failure)).toEqual({
        outcome: 'tool_error',
        detail: 'Exit code 1\nfatal: could not read from remote repository',
      });
    });
  });

  describe('OpenClaw', () => {
    const after = (toolName: string, extra: object) =>
      post(openclaw.read({ hook: 'after_tool_call', toolName, params: {}, toolCallId: 'c', cwd: '/p', ...extra }));
    it("exec's non-zero exit is a result, not an error: the plugin forwards it and it is tool_error", () => {
      const curl = { content: [{ type: 'text', text: 'curl: (7)\n\n(Command exited with code 7)' }] };
      const summary = resultSummary({ ...curl, details: { status: 'completed', exitCode: 7, aggregated: 'x' } });
      expect(summary).toEqual({ result: { status: 'completed', exitCode: 7 } });
      expect(after('exec', summary)).toEqual({ outcome: 'tool_error', detail: 'exit code 7' });
      expect(after('exec', resultSummary({ details: { status: 'completed', exitCode: 0 } })).outcome).toBe('ok');
      expect(after('exec', resultSummary({ details: { status: 'failed', exitCode: null } })).outcome).toBe(
        'tool_error',
      );
    });
    it('an exec whose result names no exit code is unknown; another tool is ok unless it has an error', () => {
      expect(after('exec', resultSummary({ details: { status: 'running', exitCode: null } })).outcome).toBe('unknown');
      expect(after('exec', {}).outcome).toBe('unknown');
      expect(after('write', resultSummary({ ok: true })).outcome).toBe('ok');
      expect(after('write', { error: 'EACCES' })).toEqual({ outcome: 'tool_error', detail: 'EACCES' });
    });
  });
});
