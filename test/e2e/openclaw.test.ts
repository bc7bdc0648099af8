/**
 * The real OpenClaw (npm `openclaw`, on Node 24: scripts/test-tools.mjs installs both under .agent-judge/tools) runs
 * one agent turn offline, `openclaw agent --local`, with the agent-judge plugin loaded from this checkout's
 * dist/openclaw and a scripted OpenAI-compatible model on loopback (chat completions, streamed, with tool calls: the
 * wire protocol OpenClaw's `openai-completions` provider speaks). The turn makes four tool calls through the resident
 * gate on the real Temporal dev server: an allowed read, a judged write (performed once, its outcome recorded), a
 * denied exec, and a call held for a person, whom the test plays with `decide`. What is asserted is what the model
 * read back, what happened on disk, and what the proposals record.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, existsSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decide, getStatus, listProposals } from '../../src/client/proposals';
import { HookGateServer } from '../../src/hooks/gate-server';
import { newAgentToken, tokenSha256 } from '../../src/gate/http-auth';
import { startSystem, type TestSystem } from '../helpers/system';

const PLUGIN_DIR = fileURLToPath(new URL('../../dist/openclaw', import.meta.url));

interface ChatRequest {
  model: string;
  stream?: boolean;
  messages: Array<{ role: string; content?: unknown; tool_call_id?: string }>;
}
type Step = { tool: string; args: Record<string, unknown> } | { text: string };

/** A scripted chat-completions model: each request gets the next step, as a streamed tool call or text. */
async function startScriptedModel(
  script: Step[],
): Promise<{ baseUrl: string; requests: ChatRequest[]; close(): Promise<void> }> {
  const requests: ChatRequest[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      let body = '';
      for await (const c of req) body += String(c);
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'scripted', object: 'model' }] }));
        return;
      }
      const r = JSON.parse(body) as ChatRequest;
      requests.push(r);
      const step = script[n++] ?? { text: 'nothing more to do' };
      const id = `chatcmpl-${n}`;
      const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
        id,
        object: 'chat.completion.chunk',
        created: 0,
        model: r.model,
        choices: [{ index: 0, delta, finish_reason: finish }],
      });
      const call =
        'tool' in step
          ? { id: `call_${n}`, type: 'function', function: { name: step.tool, arguments: JSON.stringify(step.args) } }
          : null;
      if (!r.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id,
            object: 'chat.completion',
            created: 0,
            model: r.model,
            choices: [
              {
                index: 0,
                message: call
                  ? { role: 'assistant', content: null, tool_calls: [call] }
                  : { role: 'assistant', content: (step as { text: string }).text },
                finish_reason: call ? 'tool_calls' : 'stop',
              },
            ],
            usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
      if (call) {
        send(chunk({ role: 'assistant', tool_calls: [{ index: 0, ...call }] }, null));
        send(chunk({}, 'tool_calls'));
      } else {
        send(chunk({ role: 'assistant', content: (step as { text: string }).text }, null));
        send(chunk({}, 'stop'));
      }
      send({
        id,
        object: 'chat.completion.chunk',
        created: 0,
        model: r.model,
        choices: [],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
      res.end('data: [DONE]\n\n');
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The text of the n-th tool result (1-based) in the last request the model got (the whole turn so far). */
function toolResult(requests: ChatRequest[], callId: string): string {
  const n = Number(callId.replace('call_', ''));
  const results = (requests.at(-1)?.messages ?? []).filter((m) => m.role === 'tool');
  const m = results[n - 1];
  return m === undefined ? '' : typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
}

let sys: TestSystem;
let gate: HookGateServer;
let workspace: string;
const token = newAgentToken();

beforeAll(async () => {
  sys = await startSystem({
    spec: { escalation: { approvers: ['scott'], timeout: '10m' }, hooks: { holdFor: '90s' } },
  });
  mkdirSync(join(sys.baseDir, 'workspace'));
  workspace = realpathSync(join(sys.baseDir, 'workspace'));
  writeFileSync(join(workspace, 'notes.txt'), 'the notes\n');
  mkdirSync(join(workspace, 'build'));
  writeFileSync(join(workspace, 'build', 'keep.txt'), 'keep\n');
  writeFileSync(join(sys.baseDir, 'hook-token'), `${token}\n`);
  gate = new HookGateServer({
    host: '127.0.0.1',
    port: 0,
    policy: sys.policy,
    agents: [{ agent: '@claw', tokenSha256: tokenSha256(token) }],
    temporal: { client: sys.client, taskQueue: sys.taskQueues.workflow },
    baseDir: workspace,
    auditLog: join(sys.baseDir, 'hooks-audit.jsonl'),
    log: () => undefined,
  });
});
afterAll(async () => {
  await gate?.close();
  await sys?.stop();
});

describe('the real OpenClaw with the agent-judge plugin', () => {
  it('an allowed read, a judged write performed once, a denied exec, a held call decided by a person', async () => {
    const tools = inject('tools');
    expect(tools.node24, inject('missingTools').node24).toBeTruthy();
    expect(tools.openclaw, inject('missingTools').openclaw).toBeTruthy();
    const gateUrl = await gate.start();
    const model = await startScriptedModel([
      { tool: 'read', args: { path: 'notes.txt' } },
      { tool: 'write', args: { path: 'out.txt', content: 'written once\n' } },
      { tool: 'exec', args: { command: 'rm -rf build' } },
      { tool: 'process', args: { action: 'list' } },
      { text: 'all done' },
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
              apiKey: 'scripted',
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
              config: { gateUrl, tokenFile: join(sys.baseDir, 'hook-token'), cwd: workspace, timeoutMs: 180_000 },
            },
          },
        },
      }),
    );
    const started = Date.now();
    const run = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(
        tools.node24!,
        [tools.openclaw!, 'agent', '--local', '--agent', 'main', '--message', 'tidy the workspace', '--json'],
        {
          cwd: workspace,
          env: { ...process.env, HOME: home, OPENCLAW_CONFIG_PATH: config },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    // The person: the held `process` call (no rule names it: an mcp_tool_call) waits for an approver.
    const held = await waitForAwaitingHuman('process');
    await decide(sys.client, held, { decision: 'approve', approver: 'scott', reason: 'listing processes is fine' });
    const result = await run;
    console.log(`openclaw e2e: the agent turn took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(result.code, result.stderr.slice(-3000)).toBe(0);
    await model.close();

    // The read ran: the model read the file's content.
    expect(toolResult(model.requests, 'call_1')).toContain('the notes');
    // The write was judged, allowed, performed once, and recorded.
    expect(readFileSync(join(workspace, 'out.txt'), 'utf8')).toBe('written once\n');
    const writes = (await listProposals(sys.client, {})).filter((p) => p.action_type === 'file_edit');
    expect(writes).toHaveLength(1);
    expect(await getStatus(sys.client, writes[0]!.workflow_id)).toMatchObject({
      status: 'executed',
      caller: { outcome: 'ok' },
      proposal: {
        agent_id: '@claw',
        target: { paths: [join(workspace, 'out.txt')] },
        performer: { runtime: 'openclaw', rule: 'openclaw.write' },
      },
    });
    // The exec was refused: the model read the REJECT; nothing was deleted.
    expect(toolResult(model.requests, 'call_3')).toContain('agent-judge REJECT (shell.rm-recursive-force)');
    expect(existsSync(join(workspace, 'build', 'keep.txt'))).toBe(true);
    // The held call ran once after the person approved it, and its outcome is recorded.
    expect(await getStatus(sys.client, held)).toMatchObject({
      status: 'executed',
      verdict: { decided_by: 'human:scott' },
      proposal: { action_type: 'mcp_tool_call', target: { server: 'builtin', tool: 'process' } },
    });
  }, 600_000);
});

async function waitForAwaitingHuman(tool: string): Promise<string> {
  for (;;) {
    for (const row of await listProposals(sys.client, { status: 'awaiting_human' })) {
      const s = await getStatus(sys.client, row.workflow_id).catch(() => null);
      if ((s?.proposal.target as { tool?: string } | undefined)?.tool === tool) return s!.proposal_id;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
