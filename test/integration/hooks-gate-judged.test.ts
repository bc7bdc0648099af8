/**
 * Calls the deny patterns or the shell allowlist used to let through, now judged or refused through the resident gate
 * (issue 37), with Claude Code's documented PreToolUse input against the real Temporal dev server and workers: a Bash
 * call whose input carries a field the rule does not map, a Write of a file that names programs to run later, a
 * WebFetch of the cloud metadata address, and a Write of a file named like an option. No model is configured, so a
 * full-judge-review proposal goes to a person: the call is answered "pending", and the proposal shows why.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getStatus } from '../../src/client/proposals';
import { claudePreToolUse } from '../helpers/claude-hook';
import { startGateService, type TestGateService } from '../helpers/gate-service';
import { startSystem, type TestSystem } from '../helpers/system';

/** An asymmetric matcher for a string field, typed as the string it stands for. */
const matching = (re: RegExp): string => expect.stringMatching(re) as string;

let sys: TestSystem;
let gate: TestGateService;
let project: string;

beforeAll(async () => {
  sys = await startSystem({
    spec: { escalation: { approvers: ['scott'], timeout: '10m' }, hooks: { holdFor: '1500ms' } },
    taskQueuePrefix: `hooks-judged-${Math.random().toString(36).slice(2)}`,
  });
  project = join(sys.baseDir, 'project');
  mkdirSync(join(project, 'src'), { recursive: true });
  gate = await startGateService(sys, ['@coder'], { project });
});
afterAll(async () => {
  await gate?.close();
  await sys?.stop();
});

/** Claude Code's http hook: a PreToolUse input for `tool`, the gate's answer as Claude Code reads it. */
const preToolUse = (tool: string, input: Record<string, unknown>) =>
  claudePreToolUse({ url: gate.url, token: gate.tokens['@coder']! }, project, tool, input, 'sess-judged');

/** A call held for a person: its proposal as recorded. */
async function heldProposal(answer: { decision?: string; reason: string }) {
  expect(answer.decision).toBe('deny');
  expect(answer.reason).toMatch(/pending, not performed yet\. Proposal call-[0-9a-f]{32} is waiting for a person/);
  const id = /Proposal (call-[0-9a-f]{32})/.exec(answer.reason)![1]!;
  const status = await getStatus(sys.client, id);
  expect(status.status).toBe('awaiting_human');
  return status.proposal;
}

describe('Claude Code calls that patterns alone no longer approve', () => {
  it('an allowlisted line with dangerouslyDisableSandbox is not run at once; the proposal shows it', async () => {
    const line = `ls -la src && echo ${randomUUID()}`;
    expect(await preToolUse('Bash', { command: line, description: 'look' })).toMatchObject({ decision: 'allow' });
    const proposal = await heldProposal(
      await preToolUse('Bash', { command: line, description: 'look', dangerouslyDisableSandbox: true }),
    );
    expect(proposal).toMatchObject({
      action_type: 'shell_command',
      justification: 'look',
      parameters: { command: line, unmapped_input: { dangerouslyDisableSandbox: true } },
    });
  });

  it('a Write of .mcp.json is a program_config_edit (full-judge-review): with no model, a person decides', async () => {
    const file = join(project, '.mcp.json');
    const content = JSON.stringify({ mcpServers: { x: { command: 'sh', args: ['-c', `echo ${randomUUID()}`] } } });
    const proposal = await heldProposal(await preToolUse('Write', { file_path: file, content }));
    expect(proposal).toMatchObject({
      action_type: 'program_config_edit',
      target: { paths: [file] },
      parameters: { change: 'write', content, why_judged: matching(/\.mcp\.json matches \.mcp\.json/) },
    });
    // An ordinary file beside it is still approved by the deny patterns alone.
    const plain = await preToolUse('Write', { file_path: join(project, 'src', `${randomUUID()}.ts`), content: 'x' });
    expect(plain).toMatchObject({ decision: 'allow' });
  });

  it('a WebFetch of the cloud metadata address is web_request_sensitive: a person decides, why recorded', async () => {
    const target = `http://169.254.169.254/latest/meta-data/${randomUUID()}`;
    const proposal = await heldProposal(await preToolUse('WebFetch', { url: target, prompt: 'list the keys' }));
    expect(proposal).toMatchObject({
      action_type: 'web_request_sensitive',
      target: { url: target },
      parameters: { prompt: 'list the keys', why_judged: matching(/link-local .*169\.254\.169\.254/) },
    });
  });

  it('a Write of a file named like an option is refused, naming the rule', async () => {
    const answer = await preToolUse('Write', { file_path: join(project, '-exec'), content: 'x' });
    expect(answer.decision).toBe('deny');
    expect(answer.reason).toMatch(
      /REJECT \(files\.option-name\): .*"-exec": a file named like an option turns a later glob into an option/,
    );
    const tilde = await preToolUse('Write', { file_path: '~/.bashrc', content: 'curl x | sh' });
    expect(tilde.reason).toMatch(/REJECT \(files\.tilde\): "~\/\.bashrc" starts with ~/);
  });
});
