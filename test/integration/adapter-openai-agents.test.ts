/**
 * The OpenAI Agents SDK adapter (`agent-judge/openai-agents`) driving a real `Agent` and `run()` from `@openai/agents`
 * with the SDK's own scripted model (`@openai/agents/testing`: it fails on an unexpected model call and on an unused
 * step), against the real dev server and workers. What the user sees: how often each tool really ran, the text the
 * model got back for each call, the final output, and the proposal's recorded outcome.
 */
import { randomUUID } from 'node:crypto';
import { Agent, run, RunState, setTracingDisabled, tool, type Tool } from '@openai/agents';
import {
  assistantMessage,
  functionCall,
  modelResponder,
  ScriptedModel,
  type RecordedModelCall,
} from '@openai/agents/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { withAgentJudge } from '../../src/adapters/openai-agents';
import { createGate, type GateAnswer, type GateRules } from '../../src/gate';
import { decide, getStatus } from '../../src/client/proposals';
import { McpRuleSchema } from '../../src/contracts/mcp';
import { startSystem, type TestSystem } from '../helpers/system';

setTracingDisabled(true);

let sys: TestSystem;
beforeAll(async () => {
  sys = await startSystem({ spec: { escalation: { approvers: ['scott'], timeout: '10m' } } });
});
afterAll(async () => sys?.stop());

const rules: GateRules = {
  rules: [
    { name: 'agents.read', server: 'agents', tool: 'read_note', tier: 'no-judge' },
    {
      name: 'agents.comment',
      server: 'agents',
      tool: 'comment',
      actionType: 'issue_comment',
      target: { repo: 'a/b', issue: 1 },
      parameters: { body: '$.body' },
    },
  ].map((r) => McpRuleSchema.parse(r)),
};

/** The application's tools, each counting how often it really ran. */
function tools() {
  const ran = { read_note: 0, deploy: 0, comment: 0 };
  return {
    ran,
    tools: [
      tool({
        name: 'read_note',
        description: 'Read a note from the vault',
        parameters: z.object({ path: z.string() }),
        execute: ({ path }) => {
          ran.read_note++;
          return `contents of ${path}`;
        },
      }),
      tool({
        name: 'deploy',
        description: 'Deploy a service to production',
        parameters: z.object({ service: z.string() }),
        execute: ({ service }) => {
          ran.deploy++;
          return `deployed ${service}`;
        },
      }),
      tool({
        name: 'comment',
        description: 'Comment on the issue',
        parameters: z.object({ body: z.string() }),
        execute: () => {
          ran.comment++;
          return 'commented';
        },
      }),
    ],
  };
}

/** The output the model was given for `callId` in this request (as text). */
function toolOutputSeen(call: RecordedModelCall, callId: string): string {
  const input = Array.isArray(call.request.input) ? call.request.input : [];
  const item = input.find((i) => i.type === 'function_call_result' && i.callId === callId);
  if (!item || item.type !== 'function_call_result') throw new Error(`the model was not given ${callId}'s output`);
  const out = item.output;
  return typeof out === 'string' ? out : 'text' in out ? out.text : JSON.stringify(out);
}

function setup(holdMs = 10_000, pendingMode?: 'interrupt' | 'answer') {
  const app = tools();
  const pending: Array<Extract<GateAnswer, { kind: 'pending' }>> = [];
  const gate = createGate({
    client: sys.client,
    taskQueue: sys.taskQueues.workflow,
    rules,
    performer: { agentId: '@engineering', redeemer: 'openai-agents:test' },
    holdMs,
  });
  const seen: string[] = [];
  const model = new ScriptedModel();
  const base = new Agent({ name: 'assistant', instructions: 'Help.', model, tools: app.tools });
  // The one line an application adds:
  const agent = withAgentJudge(base, { gate, pending: pendingMode, onPending: (a) => pending.push(a) });
  /** The model's next turn: record the output it was given for `callId`, then answer. */
  const reply = (callId: string, text: (seen: string) => string) =>
    modelResponder((c) => {
      const output = toolOutputSeen(c, callId);
      seen.push(output);
      return [assistantMessage(text(output))];
    });
  return { app, agent, model, pending, seen, reply };
}

describe('the OpenAI Agents SDK adapter', () => {
  it('runs a read-only tool the policy maps to no-judge, once', async () => {
    const { app, agent, model, seen, reply } = setup();
    model.enqueue([functionCall('read_note', { path: 'notes/a.md' }, { callId: 'c1' })]);
    model.enqueue(reply('c1', (out) => `The note says: ${out}`));
    const result = await run(agent, 'read my note');
    expect(app.ran).toEqual({ read_note: 1, deploy: 0, comment: 0 });
    expect(seen).toEqual(['contents of notes/a.md']);
    expect(result.finalOutput).toBe('The note says: contents of notes/a.md');
    model.assertComplete();
  });

  it('holds a call a person decides as the SDK interruption; approved, the resumed run performs it once', async () => {
    const { app, agent, model, pending, seen, reply } = setup(500);
    const service = `svc-${randomUUID().slice(0, 8)}`;
    model.enqueue([functionCall('deploy', { service }, { callId: 'c2' })]);
    const first = await run(agent, 'deploy it');
    expect(first.interruptions).toHaveLength(1);
    expect(first.interruptions[0]).toMatchObject({ name: 'deploy', arguments: JSON.stringify({ service }) });
    expect(app.ran.deploy).toBe(0);
    expect(pending).toHaveLength(1);
    const held = pending[0]!;
    expect(held).toMatchObject({ kind: 'pending', waitingFor: 'human', status: 'awaiting_human' });

    // The application keeps the paused run (durable: a string) while the person decides.
    const saved = first.state.toString();
    // Resumed before the decision: still the same interruption, still not run.
    const early = await run(agent, await RunState.fromString(agent, saved));
    expect(early.interruptions).toHaveLength(1);
    expect(app.ran.deploy).toBe(0);

    await decide(sys.client, held.workflowId, { decision: 'approve', approver: 'scott' });
    model.enqueue(reply('c2', (out) => `Done: ${out}`));
    const resumed = await run(agent, await RunState.fromString(agent, saved));
    expect(resumed.interruptions).toHaveLength(0);
    expect(app.ran.deploy).toBe(1);
    expect(seen).toEqual([`deployed ${service}`]);
    expect(resumed.finalOutput).toBe(`Done: deployed ${service}`);
    expect(await getStatus(sys.client, held.workflowId)).toMatchObject({
      status: 'executed',
      caller: { outcome: 'ok' },
      capability: { redemption: { redeemer: 'openai-agents:test' } },
    });
    model.assertComplete();
  });

  it('a rejected call never runs; the model reads the reason', async () => {
    const { app, agent, model, seen, reply } = setup();
    model.enqueue([functionCall('comment', { body: `key AKIAABCDEFGHIJKLMNOP ${randomUUID()}` }, { callId: 'c3' })]);
    model.enqueue(reply('c3', () => 'I could not post that comment.'));
    const result = await run(agent, 'post the key');
    expect(app.ran.comment).toBe(0);
    expect(result.finalOutput).toBe('I could not post that comment.');
    expect(seen).toHaveLength(1);
    const text = seen[0]!;
    expect(text).toMatch(/^agent-judge REJECT \(/);
    expect(text).toMatch(/Not performed/);
    const proposalId = /Proposal (call-[0-9a-f]{32})/.exec(text)?.[1];
    expect(proposalId).toBeDefined();
    const status = await getStatus(sys.client, proposalId!);
    expect(status).toMatchObject({ status: 'rejected', verdict: { verdict: 'REJECT' } });
    expect(text).toContain(status.verdict!.reason);
    model.assertComplete();
  });

  it("the SDK's own state.approve() cannot run a call the gate has not forwarded", async () => {
    const { app, agent, model, pending, seen, reply } = setup(500);
    model.enqueue([functionCall('deploy', { service: `svc-${randomUUID().slice(0, 8)}` }, { callId: 'c4' })]);
    const first = await run(agent, 'deploy it');
    expect(first.interruptions).toHaveLength(1);
    first.state.approve(first.interruptions[0]!);
    model.enqueue(reply('c4', () => 'Waiting for approval.'));
    const resumed = await run(agent, first.state);
    expect(app.ran.deploy).toBe(0);
    expect(seen[0]).toMatch(
      /^agent-judge: pending, not performed yet\. Proposal call-[0-9a-f]{32} is waiting for a person/,
    );
    expect(resumed.finalOutput).toBe('Waiting for approval.');
    expect(pending).toHaveLength(2);
    model.assertComplete();
  });

  it("pending: 'answer' gives the model the pending text and a time to retry, without an interruption", async () => {
    const { app, agent, model, seen, reply } = setup(500, 'answer');
    model.enqueue([functionCall('deploy', { service: `svc-${randomUUID().slice(0, 8)}` }, { callId: 'c5' })]);
    model.enqueue(reply('c5', () => 'I will retry later.'));
    const result = await run(agent, 'deploy it');
    expect(result.interruptions).toHaveLength(0);
    expect(app.ran.deploy).toBe(0);
    expect(seen[0]).toMatch(/pending, not performed yet.*Retry the identical call after \d{4}-\d\d-\d\dT/);
    expect(result.finalOutput).toBe('I will retry later.');
    model.assertComplete();
  });

  it('refuses to wrap a hosted tool it cannot hold', () => {
    const hosted = { type: 'hosted_tool', name: 'web_search' } as unknown as Tool;
    expect(() =>
      withAgentJudge([hosted], {
        gate: createGate({
          client: sys.client,
          rules,
          performer: { agentId: '@engineering', redeemer: 'x' },
          holdMs: 1,
        }),
      }),
    ).toThrow(/cannot judge the hosted_tool tool web_search/);
  });
});
