/**
 * Issue 10: `agent-judge mcp` in front of a real MCP server from npm (@modelcontextprotocol/server-filesystem), driven
 * by the real MCP SDK client over stdio, against the run's real Temporal dev server with workers started here.
 * Side effects are checked on disk: a call that is not approved leaves the directory as it was.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decide, getStatus } from '../../src/client/proposals';
import { VERDICT_META_KEY } from '../../src/contracts/mcp';
import type { ProposalRecord } from '../../src/contracts/status';
import { readChain, verifyChain } from '../../src/audit/chain';
import { exportAudit, type AuditRecord } from '../../src/audit';
import type { TestSystem } from '../helpers/system';
import { BIN, EVERYTHING_SERVER, EVIDENCE, FS_SERVER, mcpSpec, ROOT, scott, startMcpEnv, until } from '../helpers/mcp';
import { testPolicy } from '../helpers/system';

/** The policy the workers and the proxy share; `judge.withoutModel` decides full-judge-review calls. */
function specWith(withoutModel: 'escalate' | 'clarify'): Record<string, unknown> {
  return mcpSpec({
    withoutModel,
    mkdirActionType: 'workspace_mkdir',
    riskMatrix: [
      { actionType: 'workspace_move', surface: 'moves', surfaceArea: 1, actionRisk: 1, tier: 'lightweight-approval' },
    ],
    rules: [
      {
        name: 'fs.move',
        tool: 'move_file',
        actionType: 'workspace_move',
        target: { path: '$.destination' },
        parameters: { from: '$.source' },
      },
    ],
    shadow: ['workspace_move'],
  });
}

interface Env {
  sys: TestSystem;
  policyFile: string;
  workspace: string;
}

async function startEnv(withoutModel: 'escalate' | 'clarify'): Promise<Env> {
  return startMcpEnv(specWith(withoutModel));
}

const FS_UPSTREAM = (env: Env) => [process.execPath, FS_SERVER, env.sys.baseDir];

function proxyArgs(env: Env, upstream: string[] = FS_UPSTREAM(env)): string[] {
  return [
    BIN,
    'mcp',
    '--agent',
    '@engineering',
    '--policy',
    env.policyFile,
    '--address',
    inject('temporalAddress'),
    '--namespace',
    inject('temporalNamespace'),
    '--task-queue-prefix',
    env.sys.taskQueues.workflow,
    '--state-dir',
    join(env.sys.baseDir, '.agent-judge'),
    '--',
    ...upstream,
  ];
}

async function connectProxy(env: Env, upstream?: string[]): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: proxyArgs(env, upstream),
      cwd: env.sys.baseDir,
      stderr: 'pipe',
    }),
  );
  return client;
}

async function connectDirect(args: string[]): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
  return client;
}

interface CallResult {
  isError?: boolean;
  content?: Array<{ type: string; text?: string }>;
  _meta?: Record<string, unknown>;
}

const call = (c: Client, name: string, args: Record<string, unknown>, opts: Parameters<Client['callTool']>[2] = {}) =>
  c.callTool({ name, arguments: args }, undefined, opts) as Promise<CallResult>;
const verdictOf = (r: CallResult) => r._meta?.[VERDICT_META_KEY] as Record<string, unknown> | undefined;
const textOf = (r: CallResult) => (r.content ?? []).map((c) => c.text ?? '').join('\n');

/**
 * The status of the one forwarded proposal of this action type, once its outcome is recorded: the proxy reports what
 * the upstream did right after it answered the agent, and visibility is eventually consistent (a few tries each).
 */
async function statusOfOnly(env: Env, actionType: string): Promise<ProposalRecord> {
  for (let i = 0; i < 40; i++) {
    const ids: string[] = [];
    const list = env.sys.client.workflow.list({
      // This file's own task queue: other files on the shared server make proposals of the same types.
      query:
        `WorkflowType = 'proposalWorkflow' AND ActionType = '${actionType}' ` +
        `AND TaskQueue = '${env.sys.taskQueues.workflow}'`,
    });
    for await (const wf of list) ids.push(wf.workflowId);
    if (ids.length > 1) throw new Error(`${ids.length} proposals of ${actionType}`);
    const st = ids.length === 1 ? await getStatus(env.sys.client, ids[0]!) : null;
    if (st?.caller?.outcome) return st;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no proposal of ${actionType} with its outcome recorded`);
}

/** The workflow id of the running proposal that writes `path` (visibility lags: a few tries). */
async function runningProposalFor(env: Env, path: string): Promise<string> {
  for (let i = 0; i < 40; i++) {
    const list = env.sys.client.workflow.list({
      // This file's own queue only: the shared server holds many other running proposals under a full suite.
      query:
        `WorkflowType = 'proposalWorkflow' AND ExecutionStatus = 'Running' ` +
        `AND TaskQueue = '${env.sys.taskQueues.workflow}'`,
    });
    for await (const wf of list) {
      const st = await getStatus(env.sys.client, wf.workflowId).catch(() => null);
      if (st?.proposal.target.path === path && st.status === 'awaiting_human') return wf.workflowId;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no running proposal writes ${path}`);
}

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end();
  });
}

describe('agent-judge mcp in front of server-filesystem (a person decides full-judge-review calls)', () => {
  let env: Env;
  let agent: Client;
  /**
   * A second proxy whose policy holds a call 2 s instead of 10 s before it answers PENDING, for the tests that only
   * wait for that answer; the cancel and disconnect tests act while a call is held and keep the long hold.
   */
  let quick: Client;
  beforeAll(async () => {
    env = await startEnv('escalate');
    agent = await connectProxy(env);
    const policy = JSON.parse(readFileSync(env.policyFile, 'utf8')) as { spec: { mcp: Record<string, unknown> } };
    policy.spec.mcp.holdFor = '2s';
    const policyFile = join(env.sys.baseDir, 'policy-short-hold.json');
    writeFileSync(policyFile, JSON.stringify(policy));
    quick = await connectProxy({ ...env, policyFile });
  });
  afterAll(async () => {
    await quick?.close();
    await agent?.close();
    await env?.sys.stop();
  });

  it("tools/list is the upstream's, each input schema with an optional _agent_judge added", async () => {
    const direct = await connectDirect([FS_SERVER, env.sys.baseDir]);
    const upstream = await direct.listTools();
    await direct.close();
    const proxied = await agent.listTools();
    expect(proxied.tools.map((t) => t.name)).toEqual(upstream.tools.map((t) => t.name));
    for (const [i, tool] of proxied.tools.entries()) {
      const original = upstream.tools[i]!;
      const { _agent_judge: added, ...rest } = tool.inputSchema.properties as Record<string, unknown>;
      expect(added).toMatchObject({ type: 'object' });
      expect(rest).toEqual(original.inputSchema.properties);
      expect(tool.inputSchema.required).toEqual(original.inputSchema.required);
      expect(tool.inputSchema.required ?? []).not.toContain('_agent_judge');
      expect({ ...tool, inputSchema: undefined }).toEqual({ ...original, inputSchema: undefined });
    }
  });

  it('a no-judge read passes through at once and leaves one hash-chained audit line', async () => {
    writeFileSync(join(env.workspace, 'hello.txt'), 'hi there');
    const r = await call(agent, 'read_text_file', { path: join(env.workspace, 'hello.txt') });
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toContain('hi there');
    const log = join(env.sys.baseDir, '.agent-judge/mcp-audit.jsonl');
    // The line is appended right after the answer: a few tries.
    for (let i = 0; i < 40 && readChain(log).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(verifyChain(log)).toMatchObject({ ok: true, entries: 1 });
    const last = readChain<Record<string, unknown>>(log).at(-1)!.record;
    expect(last).toMatchObject({
      agent: '@engineering',
      server: 'fs',
      tool: 'read_text_file',
      rule: 'fs.read',
      outcome: 'ok',
    });
    expect(last.tool_definition_hash).toMatch(/^[0-9a-f]{64}$/);
    // `audit export` merges the pass-through log with the proposals' histories.
    const exported = await runCli([
      BIN,
      'audit',
      'export',
      '--since',
      '5m',
      '--state-dir',
      join(env.sys.baseDir, '.agent-judge'),
      '--address',
      inject('temporalAddress'),
      '--namespace',
      inject('temporalNamespace'),
    ]);
    expect(exported.code).toBe(0);
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(
      expect.objectContaining({ kind: 'mcp_pass_through', tool: 'read_text_file', rule: 'fs.read' }),
    );
  });

  it('REJECT by a rule: nothing written; the identical call gets the recorded REJECT, not judged again', async () => {
    const outside = join(env.sys.baseDir, 'outside.txt');
    const first = await call(agent, 'write_file', { path: outside, content: 'x' });
    expect(first.isError).toBe(true);
    expect(verdictOf(first)).toMatchObject({
      outcome: 'REJECT',
      verdict: 'REJECT',
      rule: 'files.roots',
      recorded: false,
    });
    expect(textOf(first)).toContain('An identical call will be refused again');
    expect(existsSync(outside)).toBe(false);
    const again = await call(agent, 'write_file', {
      path: outside,
      content: 'x',
      _agent_judge: { justification: 'please, it is important' },
    });
    expect(verdictOf(again)).toMatchObject({
      outcome: 'REJECT',
      rule: 'files.roots',
      recorded: true,
      workflow_id: verdictOf(first)!.workflow_id,
    });
    expect(existsSync(outside)).toBe(false);
  });

  it('APPROVE: forwarded exactly once, the upstream result relayed unchanged, the outcome recorded', async () => {
    const dir = join(env.workspace, 'made-by-agent');
    const r = await call(agent, 'create_directory', { path: dir });
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toContain('Successfully created directory');
    expect(statSync(dir).isDirectory()).toBe(true);
    expect(r._meta?.[VERDICT_META_KEY]).toBeUndefined();
    // The outcome is on the proposal: performed by the caller, never by agent-judge's executors.
    const st = await statusOfOnly(env, 'workspace_mkdir');
    expect(st).toMatchObject({ status: 'executed', execution: null, caller: { outcome: 'ok' } });
    expect(st.verdict).toMatchObject({ verdict: 'APPROVE', rule: 'patterns.clean' });
    // The token was redeemed and the call leased in one step: the same instant, by the proxy.
    expect(st.capability?.redemption?.redeemer).toBe('mcp-proxy');
    expect(st.capability?.redemption?.nonce).toMatch(new RegExp(`^forward:${st.workflow_id}:`));
    expect(st.caller?.forwarded_at).toBe(st.capability?.redemption?.redeemed_at);
    // That step was the Update that started and settled the proposal: no redemption round trip after the decision,
    // then the one outcome report.
    const history = await env.sys.client.workflow.getHandle(st.workflow_id).fetchHistory();
    const updates = (history.events ?? []).flatMap((e) => {
      const name = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
      return name ? [name] : [];
    });
    expect(updates).toEqual(['awaitSettled', 'callerOutcome']);
    // The audit record says which call it was, which rule mapped it, the token redeemed for it, and the times.
    await env.sys.client.workflow.getHandle(st.workflow_id).result();
    let record: AuditRecord | undefined;
    for await (const r of exportAudit(env.sys.client, { sinceMs: 600_000 }))
      if (r.workflow_id === st.workflow_id) record = r;
    expect(record?.mcp).toMatchObject({
      server: 'fs',
      tool: 'create_directory',
      rule: 'fs.mkdir',
      sequence: 0,
      outcome: 'ok',
    });
    expect(record!.mcp!.token_id).toMatch(/.+/);
    expect(record!.mcp!.call_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(record!.mcp!.tool_definition_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(record!.mcp!.forwarded_ms).toBeGreaterThanOrEqual(record!.mcp!.judged_ms!);
    expect(record!.mcp!.upstream_ms).toBeGreaterThanOrEqual(0);
  });

  it('held for a person: progress, then pending; after a signed decide the re-call is forwarded once', async () => {
    const path = join(env.workspace, 'report.md');
    let progress = 0;
    const first = await call(
      quick,
      'write_file',
      { path, content: '# report\n', _agent_judge: { justification: 'the weekly report', cited_evidence: EVIDENCE } },
      { onprogress: () => (progress += 1), resetTimeoutOnProgress: true },
    );
    expect(first.isError).toBe(true);
    const meta = verdictOf(first)!;
    expect(meta).toMatchObject({ outcome: 'PENDING', status: 'awaiting_human' });
    expect(textOf(first)).toMatch(/^pending: not performed; call again later/);
    expect(progress).toBeGreaterThan(0);
    expect(existsSync(path)).toBe(false);

    const decided = await decide(
      env.sys.client,
      String(meta.proposal_id),
      { decision: 'approve', approver: 'scott', reason: 'fine', via: 'cli' },
      { key: scott },
    );
    expect(decided.status).toBe('approved');
    expect(existsSync(path)).toBe(false); // approved is not performed: the caller performs it

    const again = await call(quick, 'write_file', { path, content: '# report\n' });
    expect(again.isError).toBeFalsy();
    expect(readFileSync(path, 'utf8')).toBe('# report\n');
    // The proxy reports the outcome right after it answers the agent: wait for it.
    const record = await until('the outcome recorded', async () => {
      const s = await getStatus(env.sys.client, String(meta.proposal_id));
      return s.caller?.outcome ? s : undefined;
    });
    expect(record.status).toBe('executed');
    expect(record.execution).toBeNull();
    expect(record.caller).toMatchObject({ outcome: 'ok' });
    expect(record.caller?.forwarded_at).toBeTruthy();

    // The identical call once more: that call finished, so this is a new proposal, held for a person again.
    const mtime = statSync(path).mtimeMs;
    const third = await call(quick, 'write_file', {
      path,
      content: '# report\n',
      _agent_judge: { justification: 'the weekly report again', cited_evidence: EVIDENCE },
    });
    expect(verdictOf(third)).toMatchObject({ outcome: 'PENDING' });
    expect(verdictOf(third)!.proposal_id).not.toBe(meta.proposal_id);
    expect(statSync(path).mtimeMs).toBe(mtime);
  });

  it('a cancelled call is never forwarded, even when approved afterwards', async () => {
    const path = join(env.workspace, 'cancelled.txt');
    const controller = new AbortController();
    const pending = call(
      agent,
      'write_file',
      { path, content: 'no', _agent_judge: { justification: 'a test file', cited_evidence: EVIDENCE } },
      { signal: controller.signal },
    );
    // Cancelled while held (the proposal waits for a person): the proxy drops it and never forwards it.
    const id = await runningProposalFor(env, path);
    controller.abort();
    await expect(pending).rejects.toThrow();
    // A person approves it later: still nobody forwards it, because nobody calls again.
    await decide(env.sys.client, id, { decision: 'approve', approver: 'scott', via: 'cli' }, { key: scott });
    await new Promise((r) => setTimeout(r, 1500));
    expect(existsSync(path)).toBe(false);
  });

  it('the agent disconnects while its call is held: never forwarded, even when approved afterwards', async () => {
    const path = join(env.workspace, 'disconnected.txt');
    const leaving = await connectProxy(env);
    const pending = call(leaving, 'write_file', {
      path,
      content: 'no',
      _agent_judge: { justification: 'a file', cited_evidence: EVIDENCE },
    });
    const id = await runningProposalFor(env, path);
    await leaving.close();
    await expect(pending).rejects.toThrow();
    await decide(env.sys.client, id, { decision: 'approve', approver: 'scott', via: 'cli' }, { key: scott });
    await new Promise((r) => setTimeout(r, 1500));
    expect(existsSync(path)).toBe(false);
  });

  it('an unmapped tool becomes an mcp_tool_call a person decides', async () => {
    const path = join(env.workspace, 'hello.txt');
    const r = await call(quick, 'edit_file', { path, edits: [{ oldText: 'hi', newText: 'ho' }] });
    expect(verdictOf(r)).toMatchObject({ outcome: 'PENDING', status: 'awaiting_human' });
    const st = await getStatus(env.sys.client, String(verdictOf(r)!.proposal_id));
    expect(st.proposal).toMatchObject({ action_type: 'mcp_tool_call', target: { server: 'fs', tool: 'edit_file' } });
    expect(st.tier).toBe('human-only');
    expect(readFileSync(path, 'utf8')).toBe('hi there');
  });

  it('shadow mode: judged (REJECT), forwarded anyway, the verdict recorded', async () => {
    const from = join(env.workspace, 'to-move.txt');
    const to = join(env.workspace, 'FORBIDDEN-moved.txt');
    writeFileSync(from, 'moving');
    const r = await call(agent, 'move_file', { source: from, destination: to });
    expect(r.isError).toBeFalsy();
    expect(readFileSync(to, 'utf8')).toBe('moving');
    const st = await statusOfOnly(env, 'workspace_move');
    expect(st).toMatchObject({ shadow: true, verdict: { verdict: 'REJECT', rule: 'paths.forbidden' } });
    expect(st?.caller).toMatchObject({ outcome: 'ok' });
  });

  it('server-everything: initialize, resources and prompts pass through unchanged', async () => {
    const upstream = [EVERYTHING_SERVER, 'stdio'];
    const direct = await connectDirect(upstream);
    const proxied = await connectProxy(env, [process.execPath, ...upstream]);
    try {
      expect(proxied.getServerVersion()).toEqual(direct.getServerVersion());
      expect(proxied.getServerCapabilities()).toEqual(direct.getServerCapabilities());
      const resources = await proxied.listResources();
      expect(resources).toEqual(await direct.listResources());
      expect(resources.resources.length).toBeGreaterThan(0);
      const uri = resources.resources[0]!.uri;
      expect(await proxied.readResource({ uri })).toEqual(await direct.readResource({ uri }));
      expect(await proxied.listResourceTemplates()).toEqual(await direct.listResourceTemplates());
      const prompts = await proxied.listPrompts();
      expect(prompts).toEqual(await direct.listPrompts());
      const simple = prompts.prompts.find((p) => !(p.arguments ?? []).some((a) => a.required));
      expect(simple).toBeDefined();
      expect(await proxied.getPrompt({ name: simple!.name })).toEqual(await direct.getPrompt({ name: simple!.name }));
    } finally {
      await proxied.close();
      await direct.close();
    }
  });

  it('an upstream tool that already has _agent_judge stops the proxy at start: exit 2, naming the tool', async () => {
    const clash = [
      "import { Server } from '@modelcontextprotocol/sdk/server/index.js';",
      "import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';",
      "import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';",
      "const s = new Server({ name: 'clash', version: '1' }, { capabilities: { tools: {} } });",
      's.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: "mine", inputSchema: ' +
        '{ type: "object", properties: { _agent_judge: { type: "string" } } } }] }));',
      'await s.connect(new StdioServerTransport());',
    ].join('\n');
    const child = spawn(process.execPath, proxyArgs(env, [process.execPath, '--input-type=module', '-e', clash]), {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('close', r));
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    await new Promise<void>((r) => child.stdout.once('data', () => r()));
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(await exited).toBe(2);
    expect(stderr).toContain('tool "mine": its inputSchema already has a property _agent_judge');
  });

  it("mcp check lists the upstream's tools with rule, tier and action type, and flags the unmapped", async () => {
    const out = await runCli([BIN, 'mcp', 'check', '--policy', env.policyFile, '--', ...FS_UPSTREAM(env)]);
    expect(out.code).toBe(0);
    const report = JSON.parse(out.stdout) as {
      server: string;
      tools: Array<Record<string, unknown>>;
      unmapped: string[];
    };
    expect(report.server).toBe('fs');
    expect(report.tools).toContainEqual({
      tool: 'write_file',
      rule: 'fs.write',
      tier: 'full-judge-review',
      action_type: 'file_write',
      unmapped: false,
    });
    expect(report.tools).toContainEqual({
      tool: 'read_text_file',
      rule: 'fs.read',
      tier: 'no-judge',
      action_type: null,
      unmapped: false,
    });
    expect(report.unmapped).toContain('edit_file');
    expect(report.tools).toContainEqual({
      tool: 'edit_file',
      rule: null,
      tier: 'human-only',
      action_type: 'mcp_tool_call',
      unmapped: true,
    });
    // What a person at a terminal reads (--format human, the default on a TTY): the same findings as a table.
    const human = await runCli([
      BIN,
      'mcp',
      'check',
      '--format',
      'human',
      '--policy',
      env.policyFile,
      '--',
      ...FS_UPSTREAM(env),
    ]);
    expect(human.code).toBe(0);
    const lines = human.stdout.split('\n');
    expect(lines[0]).toMatch(/^TOOL +RULE +TIER +ACTION TYPE$/);
    expect(lines).toContainEqual(expect.stringMatching(/^write_file +fs\.write +full-judge-review +file_write$/));
    expect(lines).toContainEqual(expect.stringMatching(/^edit_file +\(unmapped\) +human-only +mcp_tool_call$/));
    expect(human.stdout).toContain(`${report.unmapped.length} of ${report.tools.length} tools of fs match no rule`);
  });

  it('a mapped call that does not fit its action type is denied, naming the field', async () => {
    const r = await call(agent, 'write_file', { path: join(env.workspace, 'x.txt') });
    expect(verdictOf(r)).toMatchObject({ outcome: 'REFUSED' });
    expect(textOf(r)).toContain('rule fs.write cannot map this call: parameters.content');
    expect(existsSync(join(env.workspace, 'x.txt'))).toBe(false);
  });
});

describe('agent-judge mcp: CLARIFY and the clarified re-call', () => {
  let env: Env;
  let agent: Client;
  beforeAll(async () => {
    env = await startEnv('clarify');
    agent = await connectProxy(env);
  });
  afterAll(async () => {
    await agent?.close();
    await env?.sys.stop();
  });

  it('CLARIFY names rounds left; the re-call with _agent_judge clarifies the same proposal; then REJECT', async () => {
    const path = join(env.workspace, 'notes.md');
    const args = { path, content: 'notes' };
    const first = await call(agent, 'write_file', args);
    expect(verdictOf(first)).toMatchObject({ outcome: 'CLARIFY', rounds_left: 2 });
    expect(textOf(first)).toContain('_agent_judge');
    const id = verdictOf(first)!.proposal_id;
    const second = await call(agent, 'write_file', {
      ...args,
      _agent_judge: { justification: 'meeting notes', cited_evidence: EVIDENCE },
    });
    expect(verdictOf(second)).toMatchObject({ outcome: 'CLARIFY', rounds_left: 1, proposal_id: id });
    // Past the two-round limit the next CLARIFY is a REJECT (seed 000 §3.3), and it stays refused.
    const third = await call(agent, 'write_file', {
      ...args,
      _agent_judge: { justification: 'meeting notes, really' },
    });
    expect(verdictOf(third)).toMatchObject({ outcome: 'REJECT', proposal_id: id, recorded: false });
    const fourth = await call(agent, 'write_file', { ...args, _agent_judge: { justification: 'please' } });
    expect(verdictOf(fourth)).toMatchObject({ outcome: 'REJECT', proposal_id: id, recorded: true });
    expect(existsSync(path)).toBe(false);
  });
});

describe('agent-judge mcp refuses to start (fails closed)', () => {
  it('bad flags or policy: exit 2 naming the field', async () => {
    const missing = await runCli([BIN, 'mcp', '--policy', 'x.yaml', '--', 'true']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--agent: required');
    const dir = join(ROOT, 'node_modules/.cache');
    mkdirSync(dir, { recursive: true });
    const bad = join(dir, `mcp-bad-policy-${process.pid}.json`);
    const policy = testPolicy('/tmp');
    writeFileSync(
      bad,
      JSON.stringify({
        ...policy,
        spec: { ...policy.spec, mcp: { rules: [{ tool: 'x', tier: 'no-judge', actionType: 'exec' }] } },
      }),
    );
    const r = await runCli([BIN, 'mcp', '--agent', '@a', '--policy', bad, '--', 'true']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/spec\.mcp\.rules\.0: a rule needs exactly one of tier: no-judge or actionType/);
    const path = await runCli([BIN, 'mcp', '--agent', '@a', '--policy', bad.replace('.json', '-x.json'), '--', 'true']);
    expect(path.code).toBe(2);
  });

  it('Temporal unreachable: one line, exit 1, the upstream never started', async () => {
    const marker = join(ROOT, 'node_modules/.cache', `mcp-upstream-started-${process.pid}`);
    const policy = join(ROOT, 'policies/default.yaml');
    const r = await runCli([
      BIN,
      'mcp',
      '--agent',
      '@a',
      '--policy',
      policy,
      '--address',
      '127.0.0.1:1',
      '--',
      process.execPath,
      '-e',
      `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('cannot reach Temporal at 127.0.0.1:1');
    expect(existsSync(marker)).toBe(false);
  });
});
