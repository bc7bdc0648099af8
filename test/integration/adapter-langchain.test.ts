/**
 * The LangChain adapter (`agent-judge/langchain`) driving a real `createAgent` agent from `langchain` (LangGraph
 * underneath, a `MemorySaver` checkpointer) with LangChain's own scripted chat model (`fakeModel()`: it throws on a
 * model call nothing was queued for), as users run it: `{ url, token }` of the gate service (the resident gate's `/v1`
 * API) over the real dev server and workers, the policy's `spec.mcp.rules` deciding. The agent's side holds no
 * Temporal client and never names its agent id (the token does). What the user sees: how often each tool really ran
 * and with what, the ToolMessage the model got back for each call, the final answer, the interrupts, and the
 * proposal's recorded outcome.
 */
import { randomUUID } from 'node:crypto';
import { Command, MemorySaver } from '@langchain/langgraph';
import {
  AIMessage,
  createAgent,
  fakeModel,
  humanInTheLoopMiddleware,
  ToolMessage,
  type AgentMiddleware,
  type BaseMessage,
  type HITLResponse,
} from 'langchain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentJudgeMiddleware, type AgentJudgeInterrupt } from '../../src/adapters/langchain';
import type { GateAnswer } from '../../src/gate/types';
import { decide, getStatus } from '../../src/client/proposals';
import {
  type AdapterTestBed,
  type TestGateService,
  accessTo,
  closedGateUrl,
  limitRefusal,
  PROPOSAL_LIMIT,
  startAdapterTestBed,
  startLimitedService,
} from '../helpers/gate-service';
import { grantIdenticalCalls, onlyUseOf } from '../helpers/grants';
import { proposalsVisible } from '../helpers/visibility';
import { langchainTools } from '../helpers/langchain-tools';
import type { TestSystem } from '../helpers/system';

let bed: AdapterTestBed;
let sys: TestSystem;
/** The gate service with the policy's 1 s hold: a call a person decides is pending at once. */
let short: TestGateService;
/** The same rules with a 15 s hold: the judge's REJECT comes within it. */
let patient: TestGateService;
beforeAll(async () => {
  // What the policy file says for these tools (matched under the adapter's default `server: agents`); tools no rule
  // names are proposals a person decides.
  bed = await startAdapterTestBed('agents', 'agents');
  ({ sys, short, patient } = bed);
});
afterAll(async () => bed?.stop());

/** The ToolMessage the model was given for `callId` (its text). */
function toolOutputSeen(messages: BaseMessage[], callId: string): string {
  const m = messages.find((x) => ToolMessage.isInstance(x) && x.tool_call_id === callId);
  if (!m) throw new Error(`the model was not given ${callId}'s output`);
  return m.text;
}

/** The agent-judge interrupts a result carries (`__interrupt__`), as values. */
function interruptsOf(result: unknown): AgentJudgeInterrupt[] {
  const raw = (result as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__ ?? [];
  return raw.map((i) => i.value as AgentJudgeInterrupt);
}

function lastText(result: { messages: BaseMessage[] }): string {
  return result.messages.at(-1)!.text;
}

function setup(service: { url: string; token: string } = accessTo(patient), pendingMode?: 'interrupt' | 'answer') {
  const app = langchainTools();
  const pending: Array<Extract<GateAnswer, { kind: 'pending' }>> = [];
  // The one line an application adds (its only credential: the token):
  const middleware = () =>
    agentJudgeMiddleware({ ...service, pending: pendingMode, onPending: (a) => pending.push(a) });
  const seen: string[] = [];
  let checkpointer = new MemorySaver();
  const model = fakeModel();
  let judge = middleware();
  /** A fresh agent on the checkpointer: nothing of a paused run lives in the agent object. */
  const agent = (review?: AgentMiddleware, saved = true) =>
    createAgent({
      model,
      tools: app.tools,
      ...(saved ? { checkpointer } : {}),
      // After LangChain's own review step, when there is one:
      middleware: review ? [review, judge] : [judge],
    });
  /**
   * The application restarted: what the checkpointer saved, copied into a new saver (as a database-backed one reloads
   * it), and a new middleware.
   */
  const restart = () => {
    const saved = structuredClone({ storage: checkpointer.storage, writes: checkpointer.writes });
    checkpointer = Object.assign(new MemorySaver(), saved);
    judge = middleware();
  };
  /** The model's next turn: record the output it was given for `callId`, then answer. */
  const reply = (callId: string, text: (seen: string) => string) =>
    model.respond((messages) => {
      const output = toolOutputSeen(messages, callId);
      seen.push(output);
      return new AIMessage(text(output));
    });
  const thread = { configurable: { thread_id: `t-${randomUUID()}` } };
  return { app, agent, restart, model, pending, seen, reply, thread };
}

const ask = (content: string) => ({ messages: [{ role: 'user' as const, content }] });

describe('the LangChain adapter', () => {
  it('runs a read-only tool the policy maps to no-judge, once', async () => {
    const { app, agent, model, seen, reply, thread } = setup();
    model.respondWithTools([{ name: 'read_note', args: { path: 'notes/a.md' }, id: 'c1' }]);
    reply('c1', (out) => `The note says: ${out}`);
    const result = await agent().invoke(ask('read my note'), thread);
    expect(app.ran).toEqual({ read_note: 1, deploy: 0, comment: 0, migrate: 0, notify: 0, write_file: 0 });
    expect(seen).toEqual(['contents of notes/a.md']);
    expect(interruptsOf(result)).toEqual([]);
    expect(lastText(result)).toBe('The note says: contents of notes/a.md');
    expect(model.callCount).toBe(2);
  });

  it('pauses a call a person decides with interrupt(); approved, the resumed thread performs it once', async () => {
    const { app, agent, restart, model, pending, seen, reply, thread } = setup(accessTo(short));
    const service = `svc-${randomUUID().slice(0, 8)}`;
    model.respondWithTools([{ name: 'deploy', args: { service }, id: 'c2' }]);
    const first = await agent().invoke(ask('deploy it'), thread);
    const [paused, ...others] = interruptsOf(first);
    expect(others).toEqual([]);
    expect(paused).toMatchObject({
      type: 'agent-judge',
      waitingFor: 'human',
      status: 'awaiting_human',
      tool: 'deploy',
      arguments: { service },
      toolCallId: 'c2',
    });
    expect(paused!.message).toMatch(/agent-judge decide call-[0-9a-f]{32} approve\|reject/);
    expect(app.ran.deploy).toBe(0);
    expect(pending).toHaveLength(1);
    const held = pending[0]!;
    expect(paused!.proposalId).toBe(held.proposalId);

    // The application restarts while the person decides; resumed before the decision: still paused, still not run.
    restart();
    const early = await agent().invoke(new Command({ resume: 'go on' }), thread);
    expect(interruptsOf(early)).toMatchObject([{ proposalId: held.proposalId }]);
    expect(app.ran.deploy).toBe(0);
    const state = await agent().graph.getState(thread);
    expect(state.tasks).toMatchObject([{ name: 'tools', interrupts: [{ value: { proposalId: held.proposalId } }] }]);
    restart();

    await decide(sys.client, held.workflowId, { decision: 'approve', approver: 'scott' });
    reply('c2', (out) => `Done: ${out}`);
    const resumed = await agent().invoke(new Command({ resume: 'decided' }), thread);
    expect(interruptsOf(resumed)).toEqual([]);
    expect(app.ran.deploy).toBe(1);
    expect(seen).toEqual([`deployed ${service}`]);
    expect(lastText(resumed)).toBe(`Done: deployed ${service}`);
    expect(await getStatus(sys.client, held.workflowId)).toMatchObject({
      status: 'executed',
      caller: { outcome: 'ok' },
      // The gate service redeemed the approval for this runtime, and the token named the agent.
      capability: { redemption: { redeemer: 'api:langchain' } },
      proposal: { agent_id: '@engineering' },
    });
    expect(model.callCount).toBe(2);
  });

  it('a held call the person rejects never runs; the resumed thread gives the model the REJECT', async () => {
    const { app, agent, model, pending, seen, reply, thread } = setup(accessTo(short));
    model.respondWithTools([{ name: 'deploy', args: { service: `svc-${randomUUID().slice(0, 8)}` }, id: 'c14' }]);
    expect(interruptsOf(await agent().invoke(ask('deploy it'), thread))).toMatchObject([{ tool: 'deploy' }]);
    await decide(sys.client, pending[0]!.workflowId, { decision: 'reject', approver: 'scott', reason: 'not today' });
    reply('c14', () => 'The deploy was rejected.');
    const resumed = await agent().invoke(new Command({ resume: 'decided' }), thread);
    expect(interruptsOf(resumed)).toEqual([]);
    expect(app.ran.deploy).toBe(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/^agent-judge REJECT \(/);
    expect(seen[0]).toContain(pending[0]!.proposalId);
    expect(seen[0]).toContain('not today');
    expect(lastText(resumed)).toBe('The deploy was rejected.');
    expect(await getStatus(sys.client, pending[0]!.workflowId)).toMatchObject({ status: 'rejected' });
  });

  it('a rejected call never runs; the model reads the reason', async () => {
    const { app, agent, model, seen, reply, thread } = setup();
    const body = `key AKIAABCDEFGHIJKLMNOP ${randomUUID()}`;
    model.respondWithTools([{ name: 'comment', args: { body }, id: 'c3' }]);
    reply('c3', () => 'I could not post that comment.');
    const result = await agent().invoke(ask('post the key'), thread);
    expect(app.ran.comment).toBe(0);
    expect(interruptsOf(result)).toEqual([]);
    expect(lastText(result)).toBe('I could not post that comment.');
    expect(seen).toHaveLength(1);
    const text = seen[0]!;
    expect(text).toMatch(/^agent-judge REJECT \(/);
    expect(text).toMatch(/Not performed/);
    const proposalId = /Proposal (call-[0-9a-f]{32})/.exec(text)?.[1];
    expect(proposalId).toBeDefined();
    const status = await getStatus(sys.client, proposalId!);
    expect(status).toMatchObject({ status: 'rejected', verdict: { verdict: 'REJECT' } });
    expect(text).toContain(status.verdict!.reason);
    expect(model.callCount).toBe(2);
  });

  it("the application's own resume (approve, edit) cannot run a call the gate has not forwarded", async () => {
    const { app, agent, model, pending, thread } = setup(accessTo(short));
    const service = `svc-${randomUUID().slice(0, 8)}`;
    model.respondWithTools([{ name: 'deploy', args: { service }, id: 'c4' }]);
    const first = await agent().invoke(ask('deploy it'), thread);
    const [paused] = interruptsOf(first);
    expect(paused).toMatchObject({ type: 'agent-judge', tool: 'deploy' });
    // What an application used to humanInTheLoopMiddleware would send: an approval, then an edit.
    const approve: HITLResponse = { decisions: [{ type: 'approve' }] };
    const again = await agent().invoke(new Command({ resume: approve }), thread);
    expect(interruptsOf(again)).toMatchObject([{ proposalId: paused!.proposalId }]);
    const edit: HITLResponse = {
      decisions: [{ type: 'edit', editedAction: { name: 'deploy', args: { service: 'other' } } }],
    };
    const edited = await agent().invoke(new Command({ resume: edit }), thread);
    expect(interruptsOf(edited)).toMatchObject([{ proposalId: paused!.proposalId, arguments: { service } }]);
    expect(app.ran.deploy).toBe(0);
    expect(pending.map((p) => p.proposalId)).toEqual([paused!.proposalId, paused!.proposalId, paused!.proposalId]);
    expect(await getStatus(sys.client, paused!.workflowId)).toMatchObject({ status: 'awaiting_human' });
    // Only the model's first turn was asked for: the paused call never went back to the model.
    expect(model.callCount).toBe(1);
  });

  it("an edit in LangChain's human-in-the-loop step is a new call: the edit is judged and performed", async () => {
    const { app, agent, model, pending, seen, reply, thread } = setup(accessTo(short));
    const asked = `svc-${randomUUID().slice(0, 8)}`;
    const changed = `svc-${randomUUID().slice(0, 8)}`;
    const hitl = humanInTheLoopMiddleware({ interruptOn: { deploy: true } });
    model.respondWithTools([{ name: 'deploy', args: { service: asked }, id: 'c5' }]);
    // LangChain's own review comes first (after the model's turn, before the tools).
    const reviewed = await agent(hitl).invoke(ask('deploy it'), thread);
    expect(interruptsOf(reviewed)[0]).not.toMatchObject({ type: 'agent-judge' });
    expect(pending).toHaveLength(0);
    const edit: HITLResponse = {
      decisions: [{ type: 'edit', editedAction: { name: 'deploy', args: { service: changed } } }],
    };
    const judged = await agent(hitl).invoke(new Command({ resume: edit }), thread);
    const [paused] = interruptsOf(judged);
    expect(paused).toMatchObject({ type: 'agent-judge', tool: 'deploy', arguments: { service: changed } });
    expect(pending).toHaveLength(1);
    await decide(sys.client, paused!.workflowId, { decision: 'approve', approver: 'scott' });
    reply('c5', (out) => `Done: ${out}`);
    const resumed = await agent(hitl).invoke(new Command({ resume: 'decided' }), thread);
    expect(app.deployed).toEqual([changed]);
    expect(seen).toEqual([`deployed ${changed}`]);
    expect(lastText(resumed)).toBe(`Done: deployed ${changed}`);
    // The person decided the edited call, and that is what ran: the edit was judged, not slipped past.
    expect(await getStatus(sys.client, paused!.workflowId)).toMatchObject({
      status: 'executed',
      proposal: {
        parameters: { arguments: { service: changed } },
        user_task: 'deploy it',
        performer: { runtime: 'langchain', tool: 'deploy' },
      },
    });
    expect(model.callCount).toBe(2);
  });

  it('two calls in one turn: no-judge read runs once, the held deploy waits; resumed, none runs again', async () => {
    const { app, agent, model, pending, seen, thread } = setup(accessTo(short));
    const service = `svc-${randomUUID().slice(0, 8)}`;
    model.respondWithTools([
      { name: 'read_note', args: { path: 'notes/b.md' }, id: 'c7' },
      { name: 'deploy', args: { service }, id: 'c8' },
    ]);
    const first = await agent().invoke(ask('read the note, then deploy'), thread);
    expect(interruptsOf(first)).toMatchObject([{ tool: 'deploy', toolCallId: 'c8' }]);
    expect(app.ran).toMatchObject({ read_note: 1, deploy: 0 });
    await decide(sys.client, pending[0]!.workflowId, { decision: 'approve', approver: 'scott' });
    model.respond((messages) => {
      seen.push(toolOutputSeen(messages, 'c7'), toolOutputSeen(messages, 'c8'));
      return new AIMessage('Both done.');
    });
    const resumed = await agent().invoke(new Command({ resume: 'decided' }), thread);
    expect(interruptsOf(resumed)).toEqual([]);
    // Each call is its own LangGraph task (createAgent's default): the finished read is not run again.
    expect(app.ran).toMatchObject({ read_note: 1, deploy: 1 });
    expect(seen).toEqual(['contents of notes/b.md', `deployed ${service}`]);
    expect(lastText(resumed)).toBe('Both done.');
  });

  it('two held calls in one turn: each pauses on its own proposal and runs once after its own approval', async () => {
    const { app, agent, model, pending, seen, thread } = setup(accessTo(short));
    const [a, b] = [`svc-${randomUUID().slice(0, 8)}`, `svc-${randomUUID().slice(0, 8)}`];
    model.respondWithTools([
      { name: 'deploy', args: { service: a }, id: 'c11' },
      { name: 'deploy', args: { service: b }, id: 'c12' },
    ]);
    const first = await agent().invoke(ask('deploy both'), thread);
    const held = interruptsOf(first);
    expect(held.map((i) => i.toolCallId).sort()).toEqual(['c11', 'c12']);
    const proposalOf = (callId: string) => held.find((i) => i.toolCallId === callId)!;
    expect(proposalOf('c11').proposalId).not.toBe(proposalOf('c12').proposalId);

    await decide(sys.client, proposalOf('c11').workflowId, { decision: 'approve', approver: 'scott' });
    // One plain resume value for two paused calls: the approved one runs, the other pauses again.
    const half = await agent().invoke(new Command({ resume: 'decided' }), thread);
    expect(interruptsOf(half)).toMatchObject([{ toolCallId: 'c12', proposalId: proposalOf('c12').proposalId }]);
    expect(app.deployed).toEqual([a]);

    await decide(sys.client, proposalOf('c12').workflowId, { decision: 'approve', approver: 'scott' });
    model.respond((messages) => {
      seen.push(toolOutputSeen(messages, 'c11'), toolOutputSeen(messages, 'c12'));
      return new AIMessage('Both deployed.');
    });
    const done = await agent().invoke(new Command({ resume: 'decided' }), thread);
    expect(interruptsOf(done)).toEqual([]);
    expect(app.deployed).toEqual([a, b]);
    expect(seen).toEqual([`deployed ${a}`, `deployed ${b}`]);
    expect(lastText(done)).toBe('Both deployed.');
    expect(pending).toHaveLength(3);
  });

  it("an approved tool's own error answer is recorded failed (tool_error); the model reads it", async () => {
    const { app, agent, model, pending, seen, reply, thread } = setup(accessTo(short));
    model.respondWithTools([{ name: 'notify', args: { text: `disk full ${randomUUID()}` }, id: 'c13' }]);
    expect(interruptsOf(await agent().invoke(ask('page them'), thread))).toMatchObject([{ tool: 'notify' }]);
    await decide(sys.client, pending[0]!.workflowId, { decision: 'approve', approver: 'scott' });
    reply('c13', () => 'Paging failed.');
    const resumed = await agent().invoke(new Command({ resume: 'decided' }), thread);
    expect(app.ran.notify).toBe(1);
    expect(seen).toEqual(['the pager quota is used up']);
    expect(lastText(resumed)).toBe('Paging failed.');
    expect(await getStatus(sys.client, pending[0]!.workflowId)).toMatchObject({
      status: 'failed',
      caller: { outcome: 'tool_error', detail: 'the pager quota is used up' },
    });
  });

  it('an approved call whose tool throws is recorded failed; the run ends with the error', async () => {
    const { app, agent, model, pending, thread } = setup(accessTo(short));
    const version = Date.now();
    model.respondWithTools([{ name: 'migrate', args: { version }, id: 'c9' }]);
    const first = await agent().invoke(ask('migrate'), thread);
    expect(interruptsOf(first)).toMatchObject([{ tool: 'migrate' }]);
    await decide(sys.client, pending[0]!.workflowId, { decision: 'approve', approver: 'scott' });
    // With a wrapToolCall middleware, LangChain's default lets a tool's own exception end the run (without one, the
    // model would read it): the adapter records the failure and rethrows.
    await expect(agent().invoke(new Command({ resume: 'decided' }), thread)).rejects.toThrow(
      /the database refused the migration/,
    );
    expect(app.ran.migrate).toBe(1);
    expect(await getStatus(sys.client, pending[0]!.workflowId)).toMatchObject({
      status: 'failed',
      caller: { outcome: 'upstream_failure', detail: 'the database refused the migration' },
    });
    expect(model.callCount).toBe(1);
  });

  it('without a checkpointer a held call cannot pause: the run fails and the tool does not run', async () => {
    const { app, agent, model, pending, thread } = setup(accessTo(short));
    model.respondWithTools([{ name: 'deploy', args: { service: `svc-${randomUUID().slice(0, 8)}` }, id: 'c10' }]);
    await expect(agent(undefined, false).invoke(ask('deploy it'), thread)).rejects.toThrow(/No checkpointer set/);
    expect(app.ran.deploy).toBe(0);
    expect(pending).toHaveLength(1);
  });

  it("pending: 'answer' gives the model the pending text and a time to retry, without an interrupt", async () => {
    const { app, agent, model, seen, reply, thread } = setup(accessTo(short), 'answer');
    model.respondWithTools([{ name: 'deploy', args: { service: `svc-${randomUUID().slice(0, 8)}` }, id: 'c6' }]);
    reply('c6', () => 'I will retry later.');
    const result = await agent().invoke(ask('deploy it'), thread);
    expect(interruptsOf(result)).toEqual([]);
    expect(app.ran.deploy).toBe(0);
    expect(seen[0]).toMatch(/pending, not performed yet.*Retry the identical call after \d{4}-\d\d-\d\dT/);
    expect(lastText(result)).toBe('I will retry later.');
    expect(model.callCount).toBe(2);
  });
});

/** What the model is told, before the tool's own text, of a call a person approved with the path changed. */
const EDITED =
  'agent-judge: a person approved this call with edits; it ran as edited, not as sent: ' +
  'parameters.arguments.path: "/etc/passwd" -> "/tmp/safe.txt"';

describe('the LangChain adapter: what runs', () => {
  it('approved with edits by a person: runs once exactly as edited, the model is told, recorded ok', async () => {
    const { app, agent, model, pending, seen, reply, thread } = setup(accessTo(short));
    const text = `note ${randomUUID()}`;
    model.respondWithTools([{ name: 'write_file', args: { path: '/etc/passwd', text }, id: 'e1' }]);
    const first = await agent().invoke(ask('save my note'), thread);
    expect(interruptsOf(first)).toMatchObject([{ tool: 'write_file', arguments: { path: '/etc/passwd', text } }]);
    expect(app.ran.write_file).toBe(0);
    const held = pending[0]!;
    await decide(sys.client, held.proposalId, {
      decision: 'approve',
      approver: 'scott',
      edits: [{ path: 'parameters.arguments.path', value: '/tmp/safe.txt' }],
    });
    reply('e1', () => 'Saved it to /tmp/safe.txt, as the approver changed it.');
    const resumed = await agent().invoke(new Command({ resume: 'decided' }), thread);
    expect(interruptsOf(resumed)).toEqual([]);
    // The tool ran once, with the person's path, never the model's.
    expect(app.written).toEqual([{ path: '/tmp/safe.txt', text }]);
    expect(app.ran.write_file).toBe(1);
    expect(seen).toEqual([`${EDITED}\nwrote ${text.length} characters to /tmp/safe.txt`]);
    expect(lastText(resumed)).toBe('Saved it to /tmp/safe.txt, as the approver changed it.');
    expect(await getStatus(sys.client, held.proposalId)).toMatchObject({
      status: 'executed',
      caller: { outcome: 'ok' },
      edited: { changes: [{ path: 'parameters.arguments.path', from: '/etc/passwd', to: '/tmp/safe.txt' }] },
    });
    expect(model.callCount).toBe(2);
  });

  it('the gate service out of reach: no tool runs, not even a no-judge read; the model reads the refusal', async () => {
    const url = await closedGateUrl();
    const { app, agent, model, seen, reply, thread } = setup({ url, token: accessTo(patient).token });
    model.respondWithTools([{ name: 'read_note', args: { path: 'notes/a.md' }, id: 'u1' }]);
    reply('u1', () => 'agent-judge is not reachable.');
    const result = await agent().invoke(ask('read my note'), thread);
    expect(interruptsOf(result)).toEqual([]);
    expect(app.ran.read_note).toBe(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(
      /^agent-judge REJECT: agent-judge's gate service at http:\/\/127\.0\.0\.1:\d+ could not be/,
    );
    expect(seen[0]).toMatch(/Not performed\.$/);
    expect(lastText(result)).toBe('agent-judge is not reachable.');
  });

  it("a grant for one thread covers its identical call, not another thread's nor another call", async () => {
    const { app, agent, model, pending, reply, thread } = setup(accessTo(short));
    const service = `svc-${randomUUID().slice(0, 8)}`;
    const deploy = (id: string, args = { service }) => model.respondWithTools([{ name: 'deploy', args, id }]);
    deploy('g1');
    expect(interruptsOf(await agent().invoke(ask('deploy it'), thread))).toHaveLength(1);
    await decide(sys.client, pending[0]!.proposalId, { decision: 'approve', approver: 'scott' });
    // The person grants the identical call in this thread only; the approved one runs.
    const grantId = await grantIdenticalCalls(sys, bed.grants, pending[0]!.proposalId, { thisSession: true });
    reply('g1', (out) => out);
    await agent().invoke(new Command({ resume: 'decided' }), thread);
    // The identical call again in this thread: covered, it runs at once.
    deploy('g2');
    reply('g2', (out) => out);
    expect(interruptsOf(await agent().invoke(ask('again'), thread))).toEqual([]);
    expect(app.ran.deploy).toBe(2);
    // In another thread, and another service in this one: not what the grant says, each held for a person.
    deploy('g3');
    const other = { configurable: { thread_id: `t-${randomUUID()}` } };
    expect(interruptsOf(await agent().invoke(ask('deploy it'), other))).toMatchObject([{ waitingFor: 'human' }]);
    deploy('g4', { service: `${service}-b` });
    expect(interruptsOf(await agent().invoke(ask('another'), thread))).toMatchObject([{ waitingFor: 'human' }]);
    expect(app.ran.deploy).toBe(2);
    expect(await onlyUseOf(sys, grantId)).toMatchObject({
      status: 'executed',
      proposal: { session_id: thread.configurable.thread_id, parameters: { arguments: { service } } },
    });
  });

  it('a limit refuses by its name: past the proposal limit nothing runs, the model reads the limit', async () => {
    const { service, agent: agentId } = await startLimitedService(sys);
    try {
      const { app, agent, model, seen, reply, thread } = setup(accessTo(service, agentId), 'answer');
      for (let i = 0; i <= PROPOSAL_LIMIT; i++) {
        // The limit counts with visibility, which lags the starts: the last call comes once the others are listed.
        if (i === PROPOSAL_LIMIT) await proposalsVisible(sys, agentId, PROPOSAL_LIMIT);
        model.respondWithTools([{ name: 'deploy', args: { service: `svc-${randomUUID().slice(0, 8)}` }, id: `l${i}` }]);
        reply(`l${i}`, () => 'Not now.');
        await agent().invoke(ask('deploy it'), thread);
      }
      expect(app.ran.deploy).toBe(0);
      expect(seen.slice(0, PROPOSAL_LIMIT)).toEqual(
        Array(PROPOSAL_LIMIT).fill(expect.stringMatching(/^agent-judge: pending, not performed yet/)),
      );
      expect(seen[PROPOSAL_LIMIT]).toMatch(limitRefusal(agentId));
      expect(seen[PROPOSAL_LIMIT]).toMatch(/Not performed/);
    } finally {
      await service.close();
    }
  });
});
