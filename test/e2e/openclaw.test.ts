/**
 * The real OpenClaw (npm `openclaw` 2026.9.6 on Node 24: scripts/test-tools.mjs installs both under
 * .agent-judge/tools) runs one agent turn offline, `openclaw agent --local`, with the agent-judge plugin loaded from
 * this checkout's dist/openclaw and a scripted OpenAI-compatible model on loopback (test/helpers/
 * fake-chat-completions.ts: streamed chat completions with tool calls, what OpenClaw's `openai-completions` provider
 * speaks). The turn makes four tool calls through the resident gate on the real Temporal dev server with the real
 * workers: an allowed read, a judged write, a denied exec, and a call held for a person, whom the test plays with
 * `agent-judge decide` while the call waits. Asserted is what each side sees: the tool results OpenClaw sent back to
 * the model, the files, the audit log, what the proposals record, and OpenClaw's own report of the turn.
 *
 * Nothing of the user's is read: HOME is a temporary folder, the config is the test's (OPENCLAW_CONFIG_PATH), and the
 * environment is the test's own.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readChain } from '../../src/audit/chain';
import { getStatus } from '../../src/client/proposals';
import type { ProposalRecord } from '../../src/contracts/status';
import { newAgentToken, tokenSha256 } from '../../src/gate/http-auth';
import { HookGateServer } from '../../src/hooks/gate-server';
import {
  startFakeChatCompletions,
  toolResult,
  type ChatRequestBody,
  type FakeChatCompletions,
} from '../helpers/fake-chat-completions';
import { silentLogger } from '../helpers/logger';
import { startSystem, type TestSystem } from '../helpers/system';
import { toolPath } from '../helpers/tools';

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));
const PLUGIN_DIR = fileURLToPath(new URL('../../dist/openclaw', import.meta.url));
const API_KEY = 'sk-fake-openclaw-e2e';
/** The longest the agent turn may take, the person's decision included (OpenClaw's start-up is most of it). */
const TURN_BUDGET_MS = 150_000;

interface ToolCall {
  tool: string;
  args: Record<string, unknown>;
}
const READ: ToolCall = { tool: 'read', args: { path: 'notes.txt' } };
const WRITE: ToolCall = { tool: 'write', args: { path: 'out.txt', content: 'written once\n' } };
const EXEC: ToolCall = { tool: 'exec', args: { command: 'rm -rf build' } };
/** No rule names `process` (OpenClaw's control of background execs): a tool_call, which a person decides. */
const HELD: ToolCall = { tool: 'process', args: { action: 'list' } };
const FINAL = 'The notes are read, out.txt is written, build is kept, and the process list is in.';

let sys: TestSystem;
let gate: HookGateServer;
let model: FakeChatCompletions;
let workspace: string;
const token = newAgentToken();

interface Turn {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The held proposal the person decided, and what `agent-judge decide` printed. */
  held: { proposalId: string; decide: { code: number; stdout: string; stderr: string } };
}
let turn: Turn;
/** Kills what is left of the OpenClaw turn (nothing, once it ended). */
let stopTurn = () => undefined as void;

/** The result OpenClaw sent the model for a call, in the last request (which carries the whole turn). */
function seen(call: ToolCall): string | undefined {
  const last = model.calls.at(-1);
  return last ? toolResult(last, call.tool, call.args) : undefined;
}

/** The gate's audit records (no-judge and refused calls), in order. */
async function audit(): Promise<Array<Record<string, unknown>>> {
  await gate.flushAudit();
  return readChain<Record<string, unknown>>(join(sys.baseDir, 'hooks-audit.jsonl')).map((r) => r.record);
}

/**
 * A proposal once OpenClaw's outcome is on it. OpenClaw runs `after_tool_call` without awaiting it, so the report of
 * a call may still be on its way when the turn ends: a few seconds at most.
 */
async function reported(proposalId: string): Promise<ProposalRecord> {
  const until = Date.now() + 15_000;
  for (;;) {
    const status = await getStatus(sys.client, proposalId);
    if (status.caller?.outcome || Date.now() > until) return status;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Runs the agent-judge CLI as a user would; resolves with its exit code and output. */
function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { AGENT_JUDGE_POLICY: _ignored, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: sys.baseDir,
        env: { ...env, TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_NAMESPACE: inject('temporalNamespace') },
        timeout: 60_000,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * This file's proposals (its own task queue) with their status, as `agent-judge status` shows them. While calls are
 * still coming in (`whileRunning`), one whose status cannot be read yet ("still starting") is left out.
 */
async function proposals(whileRunning = false): Promise<ProposalRecord[]> {
  const query = `WorkflowType = 'proposalWorkflow' AND TaskQueue = '${sys.taskQueues.workflow}'`;
  const all: ProposalRecord[] = [];
  for await (const wf of sys.client.workflow.list({ query })) {
    const status = await getStatus(sys.client, wf.workflowId).catch((err: unknown) => {
      if (whileRunning) return null;
      throw err;
    });
    if (status) all.push(status);
  }
  return all;
}

/**
 * The person: waits (until `deadline`, or until OpenClaw is gone) for the held `process` call's proposal to reach a
 * person, then approves it with `agent-judge decide`.
 */
async function playThePerson(deadline: number, exited: () => boolean): Promise<Turn['held']> {
  while (Date.now() < deadline && !exited()) {
    const held = (await proposals(true)).find(
      (p) => p.status === 'awaiting_human' && (p.proposal.target as { tool?: string }).tool === HELD.tool,
    );
    if (held) {
      const decide = await cli(['decide', held.proposal_id, 'approve', '--approver', 'scott', '--reason', 'fine']);
      return { proposalId: held.proposal_id, decide };
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no ${HELD.tool} call reached a person (OpenClaw ${exited() ? 'exited' : 'still running'})`);
}

/** The pids of a process's descendants (Linux /proc), each after its parent. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after its last ")".
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended meanwhile.
    }
  }
  const all: number[] = [];
  const walk = (p: number): void => {
    for (const c of children.get(p) ?? []) {
      all.push(c);
      walk(c);
    }
  };
  walk(pid);
  return all;
}

/**
 * One `openclaw agent --local` turn, killed at `deadline`; resolves with its exit code and output. openclaw.mjs runs
 * the agent in a child process in a session of its own (its respawn, detached when stdio is not a terminal), which
 * would outlive its parent and hold the output open: the parent and every descendant are killed, by pid.
 */
function runTurn(home: string, config: string, deadline: number) {
  let exited = false;
  let kill = () => undefined as void;
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(
      toolPath('node24'),
      [toolPath('openclaw'), 'agent', '--local', '--agent', 'main', '--message', 'tidy the workspace', '--json'],
      {
        cwd: workspace,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, OPENCLAW_CONFIG_PATH: config },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    kill = () => {
      if (exited || child.pid === undefined) return;
      for (const pid of [child.pid, ...descendants(child.pid)]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Ended meanwhile.
        }
      }
    };
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(kill, deadline - Date.now());
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      exited = true;
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { done, exited: () => exited, kill: () => kill() };
}

beforeAll(async () => {
  sys = await startSystem({
    spec: { escalation: { approvers: ['scott'], timeout: '10m' }, hooks: { holdFor: '60s' } },
  });
  mkdirSync(join(sys.baseDir, 'workspace'));
  workspace = realpathSync(join(sys.baseDir, 'workspace'));
  writeFileSync(join(workspace, 'notes.txt'), 'the notes\n');
  mkdirSync(join(workspace, 'build'));
  writeFileSync(join(workspace, 'build', 'keep.txt'), 'keep\n');
  writeFileSync(join(sys.baseDir, 'hook-token'), `${token}\n`, { mode: 0o600 });
  gate = new HookGateServer({
    host: '127.0.0.1',
    port: 0,
    policy: sys.policy,
    agents: [{ agent: '@claw', tokenSha256: tokenSha256(token) }],
    temporal: { client: sys.client, taskQueue: sys.taskQueues.workflow },
    baseDir: workspace,
    auditLog: join(sys.baseDir, 'hooks-audit.jsonl'),
    logger: silentLogger,
  });
  const gateUrl = await gate.start();
  const after = (call: ToolCall) => (body: ChatRequestBody) =>
    expect(toolResult(body, call.tool, call.args), `the result of ${call.tool}`).toBeDefined();
  model = await startFakeChatCompletions(API_KEY, [
    READ,
    { ...WRITE, expect: after(READ) },
    { ...EXEC, expect: after(WRITE) },
    { ...HELD, expect: after(EXEC) },
    { text: FINAL, expect: after(HELD) },
  ]);

  const home = join(sys.baseDir, 'openclaw-home');
  mkdirSync(home);
  const config = join(sys.baseDir, 'openclaw.json');
  writeFileSync(
    config,
    JSON.stringify({
      agents: { defaults: { model: { primary: 'scripted/scripted' }, workspace } },
      models: {
        mode: 'replace',
        providers: {
          scripted: {
            baseUrl: model.baseUrl,
            apiKey: API_KEY,
            api: 'openai-completions',
            models: [
              {
                id: 'scripted',
                name: 'Scripted',
                reasoning: false,
                input: ['text'],
                cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
                contextWindow: 32000,
                maxTokens: 1000,
              },
            ],
          },
        },
      },
      plugins: {
        load: { paths: [PLUGIN_DIR] },
        allow: ['agent-judge'],
        entries: {
          'agent-judge': {
            enabled: true,
            config: { gateUrl, tokenFile: join(sys.baseDir, 'hook-token'), cwd: workspace, timeoutMs: 90_000 },
          },
        },
      },
    }),
  );

  const deadline = Date.now() + TURN_BUDGET_MS;
  const run = runTurn(home, config, deadline);
  stopTurn = run.kill;
  const [result, held] = await Promise.allSettled([run.done, playThePerson(deadline, run.exited)]);
  if (result.status === 'rejected') throw result.reason;
  const problems = [
    ...model.problems.map((p) => `the model: ${p}`),
    ...(held.status === 'rejected' ? [(held.reason as Error).message] : []),
    ...(result.value.code === 0
      ? []
      : [
          result.value.code === null
            ? `openclaw was killed at ${TURN_BUDGET_MS / 1000} s`
            : `openclaw exited ${result.value.code}`,
        ]),
  ];
  if (problems.length > 0 || held.status === 'rejected') {
    throw new Error(`${problems.join('; ')}\nopenclaw's log:\n${result.value.stderr.slice(-4000)}`);
  }
  turn = { ...result.value, held: held.value };
}, 180_000);

afterAll(async () => {
  stopTurn();
  await model?.close();
  await gate?.close();
  await sys?.stop();
});

describe('the real OpenClaw with the agent-judge plugin', () => {
  it('the model was asked once per step; OpenClaw reports four calls, the refused exec its one failure', () => {
    model.assertDone();
    expect(model.calls).toHaveLength(5);
    const report = JSON.parse(turn.stdout) as { payloads: Array<{ text: string }>; meta: Record<string, unknown> };
    expect(report.payloads.map((p) => p.text)).toEqual([FINAL]);
    expect(report.meta.toolSummary).toMatchObject({
      calls: 4,
      tools: ['read', 'write', 'exec', 'process'],
      failures: 1,
      unresolvedError: { toolName: 'exec' },
    });
  });

  it('an allowed read runs at once: the model reads the file; the audit log records it', async () => {
    expect(seen(READ)).toBe('the notes\n');
    expect((await audit()).filter((r) => r.tool === 'read')).toEqual([
      expect.objectContaining({ kind: 'hook_no_judge', rule: 'openclaw.read', runtime: 'openclaw', agent: '@claw' }),
    ]);
  });

  it('a judged write is approved, performed by OpenClaw exactly once, and its outcome recorded', async () => {
    expect(seen(WRITE)).toBe('Successfully wrote 13 bytes to out.txt');
    expect(readFileSync(join(workspace, 'out.txt'), 'utf8')).toBe('written once\n');
    const writes = (await proposals()).filter((p) => p.proposal.action_type === 'file_edit');
    expect(writes).toHaveLength(1);
    const proposalId = writes[0]!.proposal_id;
    // The operator's log (OpenClaw's stderr) names the approved call's proposal.
    expect(turn.stderr).toContain(`[plugins] agent-judge: approved (openclaw.write; proposal ${proposalId}): write`);
    expect(await reported(proposalId)).toMatchObject({
      status: 'executed',
      caller: { outcome: 'ok' },
      verdict: { verdict: 'APPROVE', tier: 'lightweight-approval' },
      proposal: {
        agent_id: '@claw',
        target: { paths: [join(workspace, 'out.txt')] },
        performer: { runtime: 'openclaw', tool: 'write', rule: 'openclaw.write' },
      },
    });
  });

  it('a denied exec is not run, and the model reads the rule and the reason', async () => {
    expect(seen(EXEC)).toMatch(
      /^agent-judge REJECT \(shell\.rm-recursive-force\): rm -rf deletes whole trees .*Not performed\.$/,
    );
    expect(readFileSync(join(workspace, 'build', 'keep.txt'), 'utf8')).toBe('keep\n');
    // The audit line names the call by the id the model gave it (OpenClaw's hook event carries it unchanged).
    expect((await audit()).filter((r) => r.tool === 'exec')).toEqual([
      expect.objectContaining({
        kind: 'hook_refused',
        runtime: 'openclaw',
        agent: '@claw',
        call_id: 'call_3',
        reason: expect.stringMatching(/^REJECT \(shell\.rm-recursive-force\): rm -rf deletes whole trees/) as unknown,
      }),
    ]);
  });

  it('a held call waits for a person; approved with agent-judge decide, OpenClaw runs it once', async () => {
    const { proposalId, decide } = turn.held;
    expect(decide.code, decide.stderr).toBe(0);
    expect(JSON.parse(decide.stdout)).toMatchObject({ proposal_id: proposalId, status: 'approved' });
    // What OpenClaw's process tool answers when nothing runs in the background: the tool itself ran.
    expect(seen(HELD)).toBe('No running or recent sessions.');
    expect(turn.stderr).toContain(`[plugins] agent-judge: approved (unmapped; proposal ${proposalId}): process`);
    expect(await reported(proposalId)).toMatchObject({
      status: 'executed',
      caller: { outcome: 'ok' },
      verdict: { decided_by: 'human:scott', tier: 'human-only' },
      proposal: {
        agent_id: '@claw',
        action_type: 'tool_call',
        target: { server: 'builtin', tool: 'process' },
        performer: { runtime: 'openclaw' },
      },
    });
    expect((await proposals()).filter((p) => p.proposal.action_type === 'tool_call')).toHaveLength(1);
  });
});
