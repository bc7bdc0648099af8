/**
 * The OpenAI Agents SDK adapter (`agent-judge/openai-agents`) driving a real `Agent` and `run()` from `@openai/agents`
 * with the SDK's own scripted model (`@openai/agents/testing`: it fails on an unexpected model call and on an unused
 * step), as users run it: `{ url, token }` of the gate service (the resident gate's `/v1` API) over the real dev server
 * and workers, the policy's `spec.mcp.rules` deciding. The agent's side holds no Temporal client and never names its
 * agent id (the token does). What the user sees: how often each tool really ran and with what, the text the model got
 * back for each call, the final output, and the proposal's recorded outcome.
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
import type { TestSystem } from '../helpers/system';

setTracingDisabled(true);

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

/** The application's tools, each counting how often it really ran (and with what). */
function tools() {
  const ran = { read_note: 0, deploy: 0, comment: 0, write_file: 0, migrate: 0 };
  const written: Array<{ path: string; text: string }> = [];
  return {
    ran,
    written,
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
      tool({
        name: 'write_file',
        description: 'Write a text file',
        parameters: z.object({ path: z.string(), text: z.string() }),
        execute: ({ path, text }) => {
          ran.write_file++;
          written.push({ path, text });
          return `wrote ${text.length} characters to ${path}`;
        },
      }),
      tool({
        name: 'migrate',
        description: 'Migrate the database',
        parameters: z.object({ version: z.number() }),
        // No errorFunction: the tool's exception ends the run instead of becoming text for the model.
        errorFunction: null,
        execute: (): string => {
          ran.migrate++;
          throw new Error('the database refused the migration');
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

function setup(service: { url: string; token: string } = accessTo(patient), pendingMode?: 'interrupt' | 'answer') {
  const app = tools();
  const pending: Array<Extract<GateAnswer, { kind: 'pending' }>> = [];
  const seen: string[] = [];
  const model = new ScriptedModel();
  const base = new Agent({ name: 'assistant', instructions: 'Help.', model, tools: app.tools });
  // The one line an application adds (its only credential: the token):
  const agent = withAgentJudge(base, { ...service, pending: pendingMode, onPending: (a) => pending.push(a) });
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
    expect(app.ran).toEqual({ read_note: 1, deploy: 0, comment: 0, write_file: 0, migrate: 0 });
    expect(seen).toEqual(['contents of notes/a.md']);
    expect(result.finalOutput).toBe('The note says: contents of notes/a.md');
    model.assertComplete();
  });

  it('holds a call a person decides as the SDK interruption; approved, the resumed run performs it once', async () => {
    const { app, agent, model, pending, seen, reply } = setup(accessTo(short));
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
      // The gate service redeemed the approval for this runtime, and the token named the agent.
      capability: { redemption: { redeemer: 'api:openai-agents' } },
      proposal: { agent_id: '@engineering', performer: { runtime: 'openai-agents', tool: 'deploy' } },
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
    const { app, agent, model, pending, seen, reply } = setup(accessTo(short));
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
    const { app, agent, model, seen, reply } = setup(accessTo(short), 'answer');
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
    expect(() => withAgentJudge([hosted], accessTo(patient))).toThrow(/cannot judge the hosted_tool tool web_search/);
  });
});

/** What the model is told, before the tool's own text, of a call a person approved with the path changed. */
const EDITED =
  'agent-judge: a person approved this call with edits; it ran as edited, not as sent: ' +
  'parameters.arguments.path: "/etc/passwd" -> "/tmp/safe.txt"';

describe('the OpenAI Agents SDK adapter: what runs', () => {
  it('approved with edits by a person: runs once exactly as edited, the model is told, recorded ok', async () => {
    const { app, agent, model, pending, seen, reply } = setup(accessTo(short));
    const text = `note ${randomUUID()}`;
    model.enqueue([functionCall('write_file', { path: '/etc/passwd', text }, { callId: 'e1' })]);
    const first = await run(agent, 'save my note');
    expect(first.interruptions).toHaveLength(1);
    expect(app.ran.write_file).toBe(0);
    const held = pending[0]!;
    await decide(sys.client, held.proposalId, {
      decision: 'approve',
      approver: 'scott',
      edits: [{ path: 'parameters.arguments.path', value: '/tmp/safe.txt' }],
    });
    model.enqueue(reply('e1', () => 'Saved it to /tmp/safe.txt, as the approver changed it.'));
    const resumed = await run(agent, first.state);
    // The tool ran once, with the person's path, never the model's.
    expect(app.written).toEqual([{ path: '/tmp/safe.txt', text }]);
    expect(app.ran.write_file).toBe(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBe(`${EDITED}\nwrote ${text.length} characters to /tmp/safe.txt`);
    expect(resumed.finalOutput).toBe('Saved it to /tmp/safe.txt, as the approver changed it.');
    expect(await getStatus(sys.client, held.proposalId)).toMatchObject({
      status: 'executed',
      caller: { outcome: 'ok' },
      edited: { changes: [{ path: 'parameters.arguments.path', from: '/etc/passwd', to: '/tmp/safe.txt' }] },
    });
    model.assertComplete();
  });

  it('the gate service out of reach: no tool runs, not even a no-judge read; the model reads the refusal', async () => {
    const url = await closedGateUrl();
    const { app, agent, model, seen, reply } = setup({ url, token: accessTo(patient).token });
    model.enqueue([functionCall('read_note', { path: 'notes/a.md' }, { callId: 'u1' })]);
    model.enqueue(reply('u1', () => 'agent-judge is not reachable.'));
    const result = await run(agent, 'read my note');
    expect(result.interruptions).toHaveLength(0);
    expect(app.ran.read_note).toBe(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(
      /^agent-judge REJECT: agent-judge's gate service at http:\/\/127\.0\.0\.1:\d+ could not be/,
    );
    expect(seen[0]).toMatch(/Not performed\.$/);
    expect(result.finalOutput).toBe('agent-judge is not reachable.');
    model.assertComplete();
  });

  it('an approved call whose tool throws is recorded failed; the run ends with the error', async () => {
    // The SDK has no error answer of a tool's own: with its default errorFunction a tool's exception becomes text the
    // model reads (the call ran: recorded ok); without one, as here, the exception ends the run.
    const { app, agent, model, pending } = setup(accessTo(short));
    model.enqueue([functionCall('migrate', { version: Date.now() }, { callId: 'm1' })]);
    const first = await run(agent, 'migrate');
    expect(first.interruptions).toHaveLength(1);
    await decide(sys.client, pending[0]!.proposalId, { decision: 'approve', approver: 'scott' });
    await expect(run(agent, first.state)).rejects.toThrow(/the database refused the migration/);
    expect(app.ran.migrate).toBe(1);
    expect(await getStatus(sys.client, pending[0]!.proposalId)).toMatchObject({
      status: 'failed',
      caller: { outcome: 'upstream_failure', detail: 'the database refused the migration' },
    });
    model.assertComplete();
  });

  it('a grant covers the identical call and nothing else: it runs at once, another service is held', async () => {
    const { app, agent, model, pending, seen, reply } = setup(accessTo(short));
    const [service, other] = [`svc-${randomUUID().slice(0, 8)}`, `svc-${randomUUID().slice(0, 8)}`];
    model.enqueue([functionCall('deploy', { service }, { callId: 'g1' })]);
    const first = await run(agent, 'deploy it');
    expect(first.interruptions).toHaveLength(1);
    await decide(sys.client, pending[0]!.proposalId, { decision: 'approve', approver: 'scott' });
    // The person grants the identical call (the CLI's decide ... --grant-for); the approved one runs.
    const grantId = await grantIdenticalCalls(sys, bed.grants, pending[0]!.proposalId);
    model.enqueue(reply('g1', (out) => out));
    await run(agent, first.state);
    expect(app.ran.deploy).toBe(1);

    // The identical call in a new run: covered by the grant, it runs at once; no person is asked.
    model.enqueue([functionCall('deploy', { service }, { callId: 'g2' })]);
    model.enqueue(reply('g2', (out) => out));
    const again = await run(agent, 'deploy it again');
    expect(again.interruptions).toHaveLength(0);
    expect(app.ran.deploy).toBe(2);
    expect(seen).toEqual([`deployed ${service}`, `deployed ${service}`]);
    // Another service is not what the grant says: held for a person, not run.
    model.enqueue([functionCall('deploy', { service: other }, { callId: 'g3' })]);
    const elsewhere = await run(agent, 'deploy the other one');
    expect(elsewhere.interruptions).toHaveLength(1);
    expect(app.ran.deploy).toBe(2);
    expect(pending.at(-1)).toMatchObject({ waitingFor: 'human', status: 'awaiting_human' });
    expect(await onlyUseOf(sys, grantId)).toMatchObject({
      status: 'executed',
      proposal: { agent_id: '@engineering', parameters: { arguments: { service } } },
    });
    model.assertComplete();
  });

  it('a limit refuses by its name: past the proposal limit nothing runs, the model reads the limit', async () => {
    const { service, agent: agentId } = await startLimitedService(sys);
    try {
      const { app, agent, model, seen, reply } = setup(accessTo(service, agentId), 'answer');
      for (let i = 0; i <= PROPOSAL_LIMIT; i++) {
        // The limit counts with visibility, which lags the starts: the last call comes once the others are listed.
        if (i === PROPOSAL_LIMIT) await proposalsVisible(sys, agentId, PROPOSAL_LIMIT);
        model.enqueue([functionCall('deploy', { service: `svc-${randomUUID().slice(0, 8)}` }, { callId: `l${i}` })]);
        model.enqueue(reply(`l${i}`, () => 'Not now.'));
        await run(agent, 'deploy it');
      }
      expect(app.ran.deploy).toBe(0);
      expect(seen.slice(0, PROPOSAL_LIMIT)).toEqual(
        Array(PROPOSAL_LIMIT).fill(expect.stringMatching(/^agent-judge: pending, not performed yet/)),
      );
      expect(seen[PROPOSAL_LIMIT]).toMatch(limitRefusal(agentId));
      expect(seen[PROPOSAL_LIMIT]).toMatch(/Not performed/);
      model.assertComplete();
    } finally {
      await service.close();
    }
  });
});
