/**
 * The OpenClaw plugin (src/openclaw/plugin.ts) on the resident gate, against the real Temporal dev server and the
 * real workers. The plugin's `register` is handed an object with OpenClaw's plugin API shape (`on`, `pluginConfig`,
 * `logger`); its two handlers are then called with OpenClaw's own `before_tool_call` / `after_tool_call` event and
 * context fields, as the gateway calls them. Asserted: what OpenClaw does with the answer (nothing: the tool runs;
 * `{block: true, blockReason}`: the model reads the reason) and what the proposal records.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, getStatus } from '../../src/client/proposals';
import { HookGateServer } from '../../src/hooks/gate-server';
import { newAgentToken, tokenSha256 } from '../../src/gate/http-auth';
import { readChain } from '../../src/audit/chain';
import { register, type OpenClawPluginApi } from '../../src/openclaw/plugin';
import type { LiveGrants } from '../../src/activities/live-grants';
import {
  limitRefusal,
  PROPOSAL_LIMIT,
  startGateService,
  startSystemWithGrants,
  type TestGateService,
} from '../helpers/gate-service';
import { grantIdenticalCalls, onlyUseOf } from '../helpers/grants';
import { silentLogger } from '../helpers/logger';
import type { TestSystem } from '../helpers/system';
import { proposalsVisible } from '../helpers/visibility';

type Handler = (event: Record<string, unknown>, ctx: Record<string, unknown>) => Promise<unknown>;

let sys: TestSystem;
let grants: LiveGrants;
let stopSystem: () => Promise<void>;
let gate: HookGateServer;
let workspace: string;
const token = newAgentToken();
const warnings: string[] = [];
const infos: string[] = [];
let gateUrl: string;

/** The plugin as OpenClaw loads it: `register(api)`, then the handlers it registered, by hook name. */
function loadPlugin(pluginConfig: Record<string, unknown>): {
  before: Handler;
  after: Handler;
  options: Record<string, unknown>;
} {
  const handlers = new Map<string, { handler: Handler; options: Record<string, unknown> }>();
  const api = {
    pluginConfig,
    config: { agents: { defaults: { workspace } } },
    logger: { warn: (m: string) => warnings.push(m), info: (m: string) => infos.push(m) },
    on: (hook: string, handler: Handler, options: Record<string, unknown> = {}) =>
      handlers.set(hook, { handler, options }),
  } as unknown as OpenClawPluginApi;
  register(api);
  return {
    before: handlers.get('before_tool_call')!.handler,
    after: handlers.get('after_tool_call')!.handler,
    options: handlers.get('before_tool_call')!.options,
  };
}

let plugin: ReturnType<typeof loadPlugin>;

beforeAll(async () => {
  ({
    sys,
    grants,
    stop: stopSystem,
  } = await startSystemWithGrants({
    escalation: { approvers: ['scott'], timeout: '10m' },
    hooks: { holdFor: '20s' },
  }));
  workspace = join(sys.baseDir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'notes.txt'), 'hello\n');
  writeFileSync(join(sys.baseDir, 'hook-token'), `${token}\n`);
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
  gateUrl = await gate.start();
  plugin = loadPlugin({ gateUrl, tokenFile: join(sys.baseDir, 'hook-token'), timeoutMs: 60_000 });
});
afterAll(async () => {
  await gate?.close();
  await stopSystem?.();
});

const ctx = (toolCallId: string, sessionId = 'sess-claw') => ({
  agentId: 'main',
  sessionId,
  sessionKey: 'agent:main:main',
  toolCallId,
});

describe('OpenClaw through the agent-judge plugin', () => {
  it('registers both hooks on every tool (no matcher), first in line, with a budget above the hold', () => {
    expect(plugin.options).toMatchObject({ timeoutMs: 60_000 });
    expect(plugin.options.matcher).toBeUndefined();
  });

  it('an allowed read runs at once with no proposal; the audit log records it', async () => {
    const id = `call_${randomUUID()}`;
    const answer = await plugin.before({ toolName: 'read', params: { path: 'notes.txt' }, toolCallId: id }, ctx(id));
    expect(answer).toBeUndefined();
    await gate.flushAudit();
    const last = readChain<{ kind: string; rule: string; tool: string; runtime: string }>(
      join(sys.baseDir, 'hooks-audit.jsonl'),
    ).at(-1);
    expect(last?.record).toMatchObject({
      kind: 'hook_no_judge',
      rule: 'openclaw.read',
      tool: 'read',
      runtime: 'openclaw',
    });
  });

  it("a core tool behind OpenClaw's tool_call wrapper is judged by its own rule (read: no proposal)", async () => {
    const id = `call_${randomUUID()}`;
    const wrapped = { toolName: 'tool_call', params: { id: 'openclaw:core:read', args: { path: 'notes.txt' } } };
    expect(await plugin.before({ ...wrapped, toolCallId: id }, ctx(id))).toBeUndefined();
    await gate.flushAudit();
    const last = readChain<{ kind: string; rule: string; tool: string }>(join(sys.baseDir, 'hooks-audit.jsonl')).at(-1);
    expect(last?.record).toMatchObject({ kind: 'hook_no_judge', rule: 'openclaw.read', tool: 'read' });
    // Unwrapped, the inner tool's own checks apply: a protected path is refused, wrapper or not.
    const hidden = `call_${randomUUID()}`;
    const refused = (await plugin.before(
      { toolName: 'tool_call', params: { name: 'read', arguments: { path: '.git/config' } }, toolCallId: hidden },
      ctx(hidden),
    )) as { block: boolean; blockReason: string };
    expect(refused.block).toBe(true);
    expect(refused.blockReason).toContain('files.protect');
  });

  it('a judged write is allowed once, OpenClaw performs it, after_tool_call records the outcome', async () => {
    const id = `call_${randomUUID()}`;
    const event = { toolName: 'write', params: { path: 'out.txt', content: 'written by the agent\n' }, toolCallId: id };
    const answer = await plugin.before(event, ctx(id));
    expect(answer).toBeUndefined();
    // OpenClaw performs the write (once), then reports.
    writeFileSync(join(workspace, 'out.txt'), 'written by the agent\n');
    await plugin.after({ ...event, result: { ok: true }, durationMs: 3 }, ctx(id));
    const line = infos.find((m) => m.endsWith(': write'));
    const proposalId = /proposal (call-[0-9a-f]{32})/.exec(line ?? '')?.[1];
    expect(line).toMatch(/^agent-judge: approved \(openclaw\.write; proposal call-[0-9a-f]{32}\): write$/);
    expect(await getStatus(sys.client, proposalId!)).toMatchObject({
      status: 'executed',
      caller: { outcome: 'ok' },
      proposal: {
        agent_id: '@claw',
        action_type: 'file_edit',
        target: { paths: [join(realpathSync(workspace), 'out.txt')] },
        performer: { runtime: 'openclaw', rule: 'openclaw.write' },
      },
    });
  });

  it('a denied exec is blocked with the reason the model reads; nothing runs', async () => {
    const id = `call_${randomUUID()}`;
    const answer = (await plugin.before(
      { toolName: 'exec', params: { command: 'rm -rf build' }, toolCallId: id },
      ctx(id),
    )) as { block: boolean; blockReason: string };
    expect(answer.block).toBe(true);
    expect(answer.blockReason).toMatch(/^agent-judge REJECT \(shell\.rm-recursive-force\): .*Not performed\.$/);
  });

  it('a held call (a message send: a person decides) is approved during the hold, then performed once', async () => {
    const id = `call_${randomUUID()}`;
    const event = { toolName: 'message', params: { action: 'send', to: 'ops', text: `deploy ${id}` }, toolCallId: id };
    const held = plugin.before(event, ctx(id));
    const proposalId = await waitForAwaitingHuman(`deploy ${id}`);
    await decide(sys.client, proposalId, { decision: 'approve', approver: 'scott', reason: 'ok to send' });
    expect(await held).toBeUndefined();
    await plugin.after({ ...event, result: { sent: true } }, ctx(id));
    expect(await getStatus(sys.client, proposalId)).toMatchObject({
      status: 'executed',
      caller: { outcome: 'ok' },
      proposal: { action_type: 'tool_call', target: { server: 'builtin', tool: 'message' } },
    });
  });

  it('a call still held when the hold ends is blocked with "pending" and the proposal to decide', async () => {
    const quick = new HookGateServer({
      host: '127.0.0.1',
      port: 0,
      policy: { ...sys.policy, spec: { ...sys.policy.spec, hooks: { ...sys.policy.spec.hooks, holdFor: '1s' } } },
      agents: [{ agent: '@claw', tokenSha256: tokenSha256(token) }],
      temporal: { client: sys.client, taskQueue: sys.taskQueues.workflow },
      baseDir: workspace,
      auditLog: join(sys.baseDir, 'hooks-audit-2.jsonl'),
      logger: silentLogger,
    });
    const url = await quick.start();
    try {
      const p = loadPlugin({ gateUrl: url, tokenFile: join(sys.baseDir, 'hook-token') });
      const id = `call_${randomUUID()}`;
      const answer = (await p.before(
        { toolName: 'message', params: { action: 'send', text: `later ${id}` }, toolCallId: id },
        ctx(id),
      )) as { block: boolean; blockReason: string };
      expect(answer.block).toBe(true);
      expect(answer.blockReason).toMatch(
        /^agent-judge: pending, not performed yet\. Proposal call-[0-9a-f]{32} is waiting for a person to decide/,
      );
      expect(warnings.some((w) => /agent-judge decide call-[0-9a-f]{32} approve\|reject/.test(w))).toBe(true);
    } finally {
      await quick.close();
    }
  });

  it('fails closed: no gate, a wrong token, a bad config each block the call with the reason', async () => {
    const id = `call_${randomUUID()}`;
    const call = { toolName: 'read', params: { path: 'notes.txt' }, toolCallId: id };
    const gone = loadPlugin({ gateUrl: 'http://127.0.0.1:9', tokenFile: join(sys.baseDir, 'hook-token') });
    const unreachable = (await gone.before(call, ctx(id))) as { block: boolean; blockReason: string };
    expect(unreachable.block).toBe(true);
    expect(unreachable.blockReason).toMatch(/^agent-judge: .*the call was not allowed$/);
    // What failed, by name: the gate's URL and the cause, not Node's bare "fetch failed".
    expect(unreachable.blockReason).toContain('the agent-judge gate at http://127.0.0.1:9 cannot be reached (');
    expect(unreachable.blockReason).not.toContain('fetch failed');
    writeFileSync(join(sys.baseDir, 'wrong-token'), 'not-a-token\n');
    const wrong = loadPlugin({ gateUrl, tokenFile: join(sys.baseDir, 'wrong-token') });
    const refused = (await wrong.before(call, ctx(id))) as { block: boolean; blockReason: string };
    expect(refused.block).toBe(true);
    expect(refused.blockReason).toContain('Unauthorized');
    const bad = loadPlugin({ timeoutMs: 5 });
    expect(await bad.before(call, ctx(id))).toMatchObject({
      block: true,
      blockReason:
        'agent-judge: agent-judge plugin config: timeoutMs must be an integer from 1000 to 600000; ' +
        'the call was not allowed',
    });
  });
});

type Block = { block: boolean; blockReason: string } | undefined;

/**
 * The guarantees every adapter keeps (docs/gate.md, "Conformance: guarantees × adapters") through the plugin, on a gate
 * service with a 1 s hold: a call a person decides is blocked as pending at once, and called again once decided.
 */
describe('OpenClaw through the agent-judge plugin: what runs', () => {
  let quick: TestGateService;
  let claw: ReturnType<typeof loadPlugin>;
  beforeAll(async () => {
    quick = await startGateService(sys, ['@claw'], { holdFor: '1s', project: workspace });
    claw = pluginOn(quick, '@claw');
  });
  afterAll(async () => quick?.close());

  /** A message send held for a person: its proposal, once the plugin blocked it as pending. */
  async function held(event: Record<string, unknown>, session?: string): Promise<string> {
    const id = event.toolCallId as string;
    const answer = (await claw.before(event, ctx(id, session))) as Block;
    expect(answer?.blockReason).toMatch(/^agent-judge: pending, not performed yet\. Proposal call-[0-9a-f]{32}/);
    return /Proposal (call-[0-9a-f]{32})/.exec(answer!.blockReason)![1]!;
  }
  const send = (text: string) => {
    const id = `call_${randomUUID()}`;
    return { toolName: 'message', params: { action: 'send', to: 'ops', text }, toolCallId: id };
  };

  it('an approval with edits is refused: OpenClaw cannot change params, so the call does not run', async () => {
    const event = send(`edit me ${randomUUID()}`);
    const proposalId = await held(event);
    await decide(sys.client, proposalId, {
      decision: 'approve',
      approver: 'scott',
      edits: [{ path: 'parameters.arguments.text', value: 'the approved words' }],
    });
    const again = (await claw.before(event, ctx(event.toolCallId))) as Block;
    expect(again?.block).toBe(true);
    expect(again?.blockReason).toMatch(/a person approved this call only with edits \(.*\), and openclaw /);
    expect(again?.blockReason).toMatch(/cannot change a tool's input, so it was not run/);
    expect(await getStatus(sys.client, proposalId)).toMatchObject({
      caller: { outcome: 'upstream_failure', detail: expect.stringMatching(/it was not forwarded$/) as string },
    });
  });

  it("a grant for one session covers its identical call, not another session's nor another text", async () => {
    const text = `granted ${randomUUID()}`;
    const first = send(text);
    const proposalId = await held(first);
    await decide(sys.client, proposalId, { decision: 'approve', approver: 'scott' });
    const grantId = await grantIdenticalCalls(sys, grants, proposalId, { thisSession: true });
    expect(await claw.before(first, ctx(first.toolCallId))).toBeUndefined();
    await claw.after({ ...first, result: { sent: true } }, ctx(first.toolCallId));

    // The identical send in the same session (a new tool call): the grant allows it at once.
    const next = send(text);
    expect(await claw.before(next, ctx(next.toolCallId))).toBeUndefined();
    await claw.after({ ...next, result: { sent: true } }, ctx(next.toolCallId));
    // In another session, or another text in this one: not what the grant says, each held for a person.
    await held(send(text), 'sess-other');
    await held(send(`${text} and more`));
    expect(await onlyUseOf(sys, grantId)).toMatchObject({
      status: 'executed',
      caller: { outcome: 'ok' },
      proposal: { agent_id: '@claw', session_id: 'sess-claw', parameters: { arguments: { text } } },
    });
  });

  it('the outcome is recorded as OpenClaw reports it: an error, an exec that exited 7', async () => {
    const failing = send(`fails ${randomUUID()}`);
    const exec = {
      toolName: 'exec',
      params: { command: `echo "$(date)" > ran-${randomUUID()}.log` },
      toolCallId: `call_${randomUUID()}`,
    };
    const ids = [await held(failing), await held(exec)];
    for (const id of ids) await decide(sys.client, id, { decision: 'approve', approver: 'scott' });
    for (const event of [failing, exec]) expect(await claw.before(event, ctx(event.toolCallId))).toBeUndefined();
    await claw.after({ ...failing, error: 'channel ops not found' }, ctx(failing.toolCallId));
    const exited = { content: [], details: { status: 'completed', exitCode: 7 } };
    await claw.after({ ...exec, result: exited }, ctx(exec.toolCallId));
    expect(await getStatus(sys.client, ids[0]!)).toMatchObject({
      status: 'failed',
      caller: { outcome: 'tool_error', detail: 'channel ops not found' },
    });
    expect(await getStatus(sys.client, ids[1]!)).toMatchObject({
      status: 'failed',
      caller: { outcome: 'tool_error', detail: 'exit code 7' },
    });
  });

  it('a limit refuses by its name: past the proposal limit the call is blocked with the limit', async () => {
    const agent = `@claw-${randomUUID().slice(0, 8)}`;
    const limited = await startGateService(sys, [agent], {
      holdFor: '1s',
      project: workspace,
      limits: { proposals: { perAgent: PROPOSAL_LIMIT, window: '10m' } },
    });
    try {
      const p = pluginOn(limited, agent);
      const answers: Block[] = [];
      for (let i = 0; i <= PROPOSAL_LIMIT; i++) {
        // The limit counts with visibility, which lags the starts: the last call comes once the others are listed.
        if (i === PROPOSAL_LIMIT) await proposalsVisible(sys, agent, PROPOSAL_LIMIT);
        const event = send(`limited ${i} ${randomUUID()}`);
        answers.push((await p.before(event, ctx(event.toolCallId))) as Block);
      }
      for (const a of answers.slice(0, PROPOSAL_LIMIT)) expect(a?.blockReason).toMatch(/pending, not performed yet/);
      expect(answers[PROPOSAL_LIMIT]?.block).toBe(true);
      expect(answers[PROPOSAL_LIMIT]?.blockReason).toMatch(limitRefusal(agent));
    } finally {
      await limited.close();
    }
  });
});

/** The plugin as OpenClaw loads it, configured for `service` with `agent`'s token in a file. */
function pluginOn(service: TestGateService, agent: string): ReturnType<typeof loadPlugin> {
  const tokenFile = join(sys.baseDir, `${agent.slice(1)}-token-${randomUUID().slice(0, 8)}`);
  writeFileSync(tokenFile, `${service.tokens[agent]}\n`);
  return loadPlugin({ gateUrl: service.url, tokenFile, timeoutMs: 60_000 });
}

/** The proposal waiting for a person whose call carries `text` (visibility, as `agent-judge list` reads it). */
async function waitForAwaitingHuman(text: string): Promise<string> {
  // Only this file's proposals (its own task queue): the whole namespace's awaiting_human list is long and slow to
  // walk when the full suite runs, and the hold could end before the walk found this one.
  const query =
    `WorkflowType = 'proposalWorkflow' AND TaskQueue = '${sys.taskQueues.workflow}' ` +
    `AND ExecutionStatus = 'Running'`;
  for (;;) {
    for await (const wf of sys.client.workflow.list({ query })) {
      const s = await getStatus(sys.client, wf.workflowId).catch(() => null);
      if (s?.status === 'awaiting_human' && JSON.stringify(s.proposal.parameters).includes(text)) return s.proposal_id;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
