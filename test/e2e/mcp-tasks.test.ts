/**
 * Issue 23: MCP Tasks for held calls. The SDK's real Client, declaring `tasks`, drives `agent-judge mcp` (stdio) in
 * front of server-filesystem behind the tap (which logs every tools/call that reaches the upstream), against the
 * run's real Temporal server: a held task-augmented call becomes a task whose state follows its proposal, a person
 * decides with a signed `decide`, and the task completes with the upstream's result, performed once; a rejection
 * fails it with the reason; a restarted proxy still answers for it; a client without tasks gets today's pending text.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide } from '../../src/client/proposals';
import {
  callTool,
  connectProxy,
  EVIDENCE,
  mcpSpec,
  proxyArgs,
  scott,
  startMcpEnv,
  tappedFsUpstream,
  textOf,
  upstreamCalls,
  verdictOf,
  type McpEnv,
} from '../helpers/mcp';

const PREFIX = 'agent-judge/task/';

/** An agent that takes tasks (client capabilities `tasks`), on a proxy of its own. */
async function tasksAgent(env: McpEnv, tap: string): Promise<Client> {
  const agent = new Client(
    { name: 'tasks-agent', version: '1' },
    { capabilities: { tasks: { list: {}, cancel: {} } } },
  );
  await agent.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: proxyArgs(env, tappedFsUpstream(env, tap)),
      cwd: env.baseDir,
      stderr: 'ignore',
    }),
  );
  return agent;
}

/** A task-augmented write_file: the CreateTaskResult's task. */
async function writeAsTask(agent: Client, path: string, content: string) {
  const created = await agent.request(
    {
      method: 'tools/call',
      params: {
        name: 'write_file',
        arguments: { path, content, _agent_judge: { justification: 'the weekly report', cited_evidence: EVIDENCE } },
      },
    },
    CreateTaskResultSchema,
    { task: { ttl: 120_000 } },
  );
  return created.task;
}

const workflowOf = (taskId: string) => taskId.slice(PREFIX.length);
/** tasks/result waits for the decision and the performance: past the SDK's 60 s default on a loaded machine. */
const WAIT = { timeout: 240_000 };

describe('agent-judge mcp: MCP Tasks for held calls (a person decides)', () => {
  let env: McpEnv;
  let tap: string;
  let agent: Client;
  beforeAll(async () => {
    env = await startMcpEnv(mcpSpec({ holdFor: '2s' }));
    tap = join(env.baseDir, 'tap.jsonl');
    agent = await tasksAgent(env, tap);
  });
  afterAll(async () => {
    await agent?.close();
    await env?.sys.stop();
  });

  it("initialize and tools/list say so: tasks for tools/call, judged tools' taskSupport optional", async () => {
    expect(agent.getServerCapabilities()?.tasks).toMatchObject({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await agent.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('write_file')?.execution?.taskSupport).toBe('optional');
    // no-judge: the upstream's own value (server-filesystem says forbidden)
    expect(byName.get('read_text_file')?.execution?.taskSupport).toBe('forbidden');
  });

  it('a held call becomes a task; approved, it completes with the upstream result, performed once', async () => {
    const path = join(env.workspace, 'task-approved.md');
    const task = await writeAsTask(agent, path, '# approved\n');
    expect(task.taskId.startsWith(PREFIX)).toBe(true);
    expect(task.status).toBe('working');
    const got = await agent.experimental.tasks.getTask(task.taskId);
    expect(got.status).toBe('working');
    expect(got.statusMessage).toMatch(/a person to decide/);
    // Held past the policy's hold (2 s): still a working task, nothing written.
    await new Promise((r) => setTimeout(r, 2500));
    expect((await agent.experimental.tasks.getTask(task.taskId)).status).toBe('working');
    expect(existsSync(path)).toBe(false);

    await decide(
      env.sys.client,
      workflowOf(task.taskId),
      { decision: 'approve', approver: 'scott', reason: 'fine', via: 'cli' },
      { key: scott },
    );
    const result = await agent.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, WAIT);
    expect(result.isError).toBeFalsy();
    expect(textOf(result as never)).toMatch(/Successfully wrote/);
    expect(readFileSync(path, 'utf8')).toBe('# approved\n');
    expect((await agent.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
    expect(upstreamCalls(tap, 'write_file').filter((c) => c.arguments?.path === path)).toHaveLength(1);
    const listed = await agent.experimental.tasks.listTasks();
    expect(listed.tasks.find((t) => t.taskId === task.taskId)?.status).toBe('completed');
  });

  it('rejected: the task fails with the reason the model reads; nothing written', async () => {
    const path = join(env.workspace, 'task-rejected.md');
    const task = await writeAsTask(agent, path, 'no\n');
    await decide(
      env.sys.client,
      workflowOf(task.taskId),
      { decision: 'reject', approver: 'scott', reason: 'not this file', via: 'cli' },
      { key: scott },
    );
    const result = await agent.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, WAIT);
    expect(result.isError).toBe(true);
    expect(textOf(result as never)).toMatch(/^REJECT \(.*\): not this file/);
    const got = await agent.experimental.tasks.getTask(task.taskId);
    expect(got.status).toBe('failed');
    expect(got.statusMessage).toMatch(/not this file/);
    expect(existsSync(path)).toBe(false);
    expect(upstreamCalls(tap, 'write_file').filter((c) => c.arguments?.path === path)).toHaveLength(0);
  });

  it("tasks/cancel ends the caller's interest: never performed, the proposal stays open", async () => {
    const path = join(env.workspace, 'task-cancelled.md');
    const task = await writeAsTask(agent, path, 'no\n');
    const cancelled = await agent.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.statusMessage).toMatch(/does not withdraw the proposal/);
    await decide(
      env.sys.client,
      workflowOf(task.taskId),
      { decision: 'approve', approver: 'scott', via: 'cli' },
      { key: scott },
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect(existsSync(path)).toBe(false);
    expect((await agent.experimental.tasks.getTask(task.taskId)).status).toBe('cancelled');
  });

  it('durable: after a restart, tasks/get still reports the task; the approval is performed once', WAIT, async () => {
    const path = join(env.workspace, 'task-restart.md');
    const first = await tasksAgent(env, tap);
    const task = await writeAsTask(first, path, '# after restart\n');
    await first.close(); // the proxy ends with it
    await decide(
      env.sys.client,
      workflowOf(task.taskId),
      { decision: 'approve', approver: 'scott', via: 'cli' },
      { key: scott },
    );
    expect(existsSync(path)).toBe(false); // nobody performs it while no proxy runs

    const second = await tasksAgent(env, tap);
    try {
      const got = await second.experimental.tasks.getTask(task.taskId);
      expect(['working', 'completed']).toContain(got.status);
      const result = await second.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, WAIT);
      expect(result.isError).toBeFalsy();
      expect(readFileSync(path, 'utf8')).toBe('# after restart\n');
      expect((await second.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
      expect(upstreamCalls(tap, 'write_file').filter((c) => c.arguments?.path === path)).toHaveLength(1);
    } finally {
      await second.close();
    }
    // A third proxy answers from the record: completed, with the same result, and performs nothing more.
    const third = await tasksAgent(env, tap);
    try {
      expect((await third.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
      const again = await third.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, WAIT);
      expect(textOf(again as never)).toMatch(/Successfully wrote/);
      expect(upstreamCalls(tap, 'write_file').filter((c) => c.arguments?.path === path)).toHaveLength(1);
    } finally {
      await third.close();
    }
  });

  it('an unknown task id of ours is not found; a client without tasks gets the pending text as before', async () => {
    await expect(agent.experimental.tasks.getTask(`${PREFIX}no-such-proposal`)).rejects.toThrow(/Task not found/);
    const plain = await connectProxy(env);
    try {
      expect(plain.agent.getServerCapabilities()?.tasks).toBeUndefined();
      const { tools } = await plain.agent.listTools();
      expect(tools.find((t) => t.name === 'write_file')?.execution).toEqual({ taskSupport: 'forbidden' }); // as listed
      const path = join(env.workspace, 'plain.md');
      const r = await callTool(plain.agent, 'write_file', {
        path,
        content: 'x',
        _agent_judge: { justification: 'a file', cited_evidence: EVIDENCE },
      });
      expect(verdictOf(r)).toMatchObject({ outcome: 'PENDING', status: 'awaiting_human' });
      expect(textOf(r)).toMatch(/^pending: not performed; call again later/);
    } finally {
      await plain.agent.close();
    }
  });
});
