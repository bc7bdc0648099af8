/**
 * The Vercel AI SDK 7 adapter (`agent-judge/ai-sdk`) driving the real `generateText` of `ai` 7 with the SDK's own
 * scripted model (`MockLanguageModelV4` from `ai/test`), as users run it: `{ url, token }` of the gate service (the
 * resident gate's `/v1` API) over the real dev server and workers this file starts, the policy's `spec.mcp.rules`
 * deciding. The application's process holds no Temporal client and never names its agent id (the token does).
 * `ai` 7 needs Node 22, so the application runs as a Node 22 child process (the test tools' Node 22 and their `ai`,
 * scripts/test-tools.mjs) importing the built package (dist/, through a consumer folder whose node_modules links
 * `agent-judge` to this checkout and `ai` to the installed SDK). Its source (test/helpers/ai-sdk-app.ts) is first
 * type-checked against `ai` 7's own declarations (strict, nodenext): the adapter's structural types must fit the real
 * SDK's.
 * What the user sees: how often each tool really ran, what the model was given for each call, the final text, the
 * approval requests, and the proposal's recorded outcome.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, getStatus } from '../../src/client/proposals';
import { App, call, makeConsumer, REPO } from '../helpers/ai-sdk-app';
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

const TSC = join(REPO, 'node_modules/typescript/bin/tsc');
const run = promisify(execFile);

let bed: AdapterTestBed;
let sys: TestSystem;
/** The gate service with the policy's 1 s hold: a call a person decides is pending at once. */
let short: TestGateService;
/** The same rules with a 15 s hold: the judge's REJECT comes within it. */
let patient: TestGateService;
let consumer: string;
const apps: App[] = [];

beforeAll(async () => {
  // What the policy file says for these tools (matched under the adapter's default `server: ai-sdk`); tools no rule
  // names are proposals a person decides.
  bed = await startAdapterTestBed('ai-sdk', 'ai');
  ({ sys, short, patient } = bed);
  consumer = makeConsumer();
}, 120_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  await bed?.stop();
  if (consumer) rmSync(consumer, { recursive: true, force: true });
});

/** The application in a Node 22 process of its own, given the gate service's URL and a token. */
function startApp(gate: { url: string; token: string }): App {
  const app = new App(consumer, gate);
  apps.push(app);
  return app;
}

describe('the Vercel AI SDK 7 adapter', () => {
  it("type-checks the application against ai 7's own declarations (strict, nodenext)", async () => {
    const typecheck = await run(process.execPath, [TSC, '-p', consumer], { cwd: consumer }).catch(
      (err: { stdout?: string; message?: string }) => ({ stdout: err.stdout ?? err.message ?? 'tsc failed' }),
    );
    expect(typecheck.stdout).toBe('');
  }, 120_000);

  it('runs a read-only tool the policy maps to no-judge, once', async () => {
    const app = startApp(accessTo(patient));
    const reply = await app.generate({
      prompt: 'read my note',
      steps: [call('c1', 'read_note', { path: 'notes/a.md' }), { text: 'The note says: contents of notes/a.md' }],
    });
    expect(reply.error).toBeUndefined();
    expect(reply.ran).toEqual({ read_note: 1, deploy: 0, comment: 0, write_file: 0, migrate: 0 });
    expect(reply.seen).toEqual([{ type: 'text', value: 'contents of notes/a.md' }]);
    expect(reply.text).toBe('The note says: contents of notes/a.md');
    expect(reply.approvals).toEqual([]);
    expect(reply.unusedSteps).toBe(0);
  });

  it('pauses a call a person decides as the approval request; approved, a resumed run performs it once', async () => {
    const app = startApp(accessTo(short));
    const service = `svc-${randomUUID().slice(0, 8)}`;
    const first = await app.generate({ prompt: 'deploy it', steps: [call('c2', 'deploy', { service })] });
    expect(first.error).toBeUndefined();
    expect(first.ran.deploy).toBe(0);
    expect(first.approvals).toHaveLength(1);
    expect(first.pending).toHaveLength(1);
    const held = first.pending[0]!;
    expect(held).toMatchObject({ kind: 'pending', waitingFor: 'human', status: 'awaiting_human' });
    // The reason on the approval request tells the approver what to do (shown to a person, not the model).
    expect(first.approvals![0]).toEqual({
      toolCallId: 'c2',
      reason: expect.stringContaining(`agent-judge decide ${held.proposalId} approve|reject`) as string,
    });

    // Resumed the SDK's way (the application's own approval response) before the decision: nothing runs, the model is
    // not called, and the run stops with the proposal that waits.
    const early = await app.generate({ resume: true, steps: [] });
    expect(early.ran.deploy).toBe(0);
    expect(early.modelCalls).toBe(0);
    expect(early.error).toMatchObject({
      name: 'AgentJudgePendingError',
      waiting: { proposalId: held.proposalId, workflowId: held.workflowId },
    });
    expect(early.error!.message).toMatch(/^agent-judge: pending, not performed yet\. Proposal call-[0-9a-f]{32}/);
    expect(await getStatus(sys.client, held.workflowId)).toMatchObject({ status: 'awaiting_human' });

    await decide(sys.client, held.workflowId, { decision: 'approve', approver: 'scott' });
    // The paused run is durable: its messages (JSON) resumed in another process, with a gate of its own.
    const saved = JSON.parse(JSON.stringify(first.messages)) as unknown[];
    const later = startApp(accessTo(patient));
    const resumed = await later.generate({
      messages: saved,
      resume: true,
      steps: [{ text: `Done: deployed ${service}` }],
    });
    expect(resumed.error).toBeUndefined();
    expect(resumed.ran.deploy).toBe(1);
    expect(resumed.seen).toEqual([{ type: 'text', value: `deployed ${service}` }]);
    expect(resumed.text).toBe(`Done: deployed ${service}`);
    expect(resumed.unusedSteps).toBe(0);
    expect(await getStatus(sys.client, held.workflowId)).toMatchObject({
      status: 'executed',
      caller: { outcome: 'ok' },
      // The gate service redeemed the approval for this runtime, and the token named the agent.
      capability: { redemption: { redeemer: 'api:ai-sdk' } },
      proposal: { agent_id: '@engineering' },
    });
    expect(early.ran.deploy + resumed.ran.deploy).toBe(1);
  });

  it('a held call the person rejects: the resumed run does not run it, the model reads the REJECT', async () => {
    const app = startApp(accessTo(short));
    const first = await app.generate({
      prompt: 'deploy it',
      steps: [call('c9', 'deploy', { service: `svc-${randomUUID().slice(0, 8)}` })],
    });
    expect(first.approvals).toHaveLength(1);
    const held = first.pending[0]!;
    await decide(sys.client, held.workflowId, {
      decision: 'reject',
      approver: 'scott',
      reason: 'not during the freeze',
    });
    const resumed = await app.generate({ resume: true, steps: [{ text: 'The deploy was rejected.' }] });
    expect(resumed.error).toBeUndefined();
    expect(resumed.ran.deploy).toBe(0);
    expect(resumed.seen).toHaveLength(1);
    expect(resumed.seen[0]).toMatchObject({ type: 'execution-denied' });
    expect(resumed.seen[0]!.reason).toMatch(/^agent-judge REJECT \(/);
    expect(resumed.seen[0]!.reason).toContain('not during the freeze');
    expect(resumed.seen[0]!.reason).toContain(held.proposalId);
    expect(resumed.text).toBe('The deploy was rejected.');
    expect(await getStatus(sys.client, held.workflowId)).toMatchObject({ status: 'rejected' });
  });

  it('a rejected call never runs; the model reads the reason as the SDK denial', async () => {
    const app = startApp(accessTo(patient));
    const reply = await app.generate({
      prompt: 'post the key',
      steps: [
        call('c3', 'comment', { body: `key AKIAABCDEFGHIJKLMNOP ${randomUUID()}` }),
        { text: 'I could not post that comment.' },
      ],
    });
    expect(reply.error).toBeUndefined();
    expect(reply.ran.comment).toBe(0);
    expect(reply.text).toBe('I could not post that comment.');
    expect(reply.approvals).toEqual([]);
    expect(reply.seen).toHaveLength(1);
    const seen = reply.seen[0]!;
    expect(seen.type).toBe('execution-denied');
    const text = seen.reason!;
    expect(text).toMatch(/^agent-judge REJECT \(/);
    expect(text).toMatch(/Not performed/);
    const proposalId = /Proposal (call-[0-9a-f]{32})/.exec(text)?.[1];
    expect(proposalId).toBeDefined();
    const status = await getStatus(sys.client, proposalId!);
    expect(status).toMatchObject({ status: 'rejected', verdict: { verdict: 'REJECT' } });
    expect(text).toContain(status.verdict!.reason);
  });

  it('streamText: the same pause; a resume before the decision is the stream error; approved, runs once', async () => {
    const app = startApp(accessTo(short));
    const service = `svc-${randomUUID().slice(0, 8)}`;
    const first = await app.generate({ stream: true, prompt: 'deploy it', steps: [call('c6', 'deploy', { service })] });
    expect(first.error).toBeUndefined();
    expect(first.approvals).toHaveLength(1);
    expect(first.ran.deploy).toBe(0);
    const held = first.pending[0]!;
    expect(held).toMatchObject({ kind: 'pending', waitingFor: 'human' });

    const early = await app.generate({ stream: true, resume: true, steps: [] });
    expect(early.error).toMatchObject({ name: 'AgentJudgePendingError', waiting: { proposalId: held.proposalId } });
    expect(early.modelCalls).toBe(0);
    expect(early.ran.deploy).toBe(0);

    await decide(sys.client, held.workflowId, { decision: 'approve', approver: 'scott' });
    const resumed = await app.generate({ stream: true, resume: true, steps: [{ text: 'Deployed.' }] });
    expect(resumed.error).toBeUndefined();
    expect(resumed.ran.deploy).toBe(1);
    expect(resumed.seen).toEqual([{ type: 'text', value: `deployed ${service}` }]);
    expect(resumed.text).toBe('Deployed.');
    expect(await getStatus(sys.client, held.workflowId)).toMatchObject({
      status: 'executed',
      caller: { outcome: 'ok' },
    });
  });

  it('ToolLoopAgent: a REJECT never runs; a held call pauses; approved, the resumed agent runs it once', async () => {
    const app = startApp(accessTo(short));
    const rejected = await app.generate({
      agent: true,
      prompt: 'post the key',
      steps: [call('c7', 'comment', { body: `key AKIAABCDEFGHIJKLMNOP ${randomUUID()}` }), { text: 'Not posted.' }],
    });
    expect(rejected.error).toBeUndefined();
    expect(rejected.ran.comment).toBe(0);
    expect(rejected.seen[0]).toMatchObject({ type: 'execution-denied' });
    expect(rejected.seen[0]!.reason).toMatch(/^agent-judge REJECT \(/);

    const service = `svc-${randomUUID().slice(0, 8)}`;
    const first = await app.generate({ agent: true, prompt: 'deploy it', steps: [call('c8', 'deploy', { service })] });
    expect(first.approvals).toHaveLength(1);
    expect(first.ran.deploy).toBe(0);
    const held = first.pending[0]!;
    await decide(sys.client, held.workflowId, { decision: 'approve', approver: 'scott' });
    const resumed = await app.generate({ agent: true, resume: true, steps: [{ text: 'Deployed.' }] });
    expect(resumed.error).toBeUndefined();
    expect(resumed.ran.deploy).toBe(1);
    expect(resumed.text).toBe('Deployed.');
    expect(await getStatus(sys.client, held.workflowId)).toMatchObject({ status: 'executed' });
  });

  it("the application's own toolApproval ('approved') cannot run a call the gate has not forwarded", async () => {
    const app = startApp(accessTo(short));
    const reply = await app.generate({
      prompt: 'deploy it',
      ownApproval: true,
      steps: [call('c4', 'deploy', { service: `svc-${randomUUID().slice(0, 8)}` }), { text: 'Waiting for approval.' }],
    });
    expect(reply.error).toBeUndefined();
    expect(reply.ran.deploy).toBe(0);
    // The judged execute asked the gate itself: pending, so a tool error whose text the model reads.
    expect(reply.seen).toEqual([
      {
        type: 'error-text',
        value: expect.stringMatching(
          /^agent-judge: pending, not performed yet\. Proposal call-[0-9a-f]{32} is waiting for a person/,
        ) as string,
      },
    ]);
    expect(reply.pending).toHaveLength(1);
    expect(reply.text).toBe('Waiting for approval.');
  });

  it("pending: 'answer' gives the model the pending text and a time to retry, no approval request", async () => {
    const app = startApp(accessTo(short));
    const reply = await app.generate({
      prompt: 'deploy it',
      pending: 'answer',
      steps: [call('c5', 'deploy', { service: `svc-${randomUUID().slice(0, 8)}` }), { text: 'I will retry later.' }],
    });
    expect(reply.error).toBeUndefined();
    expect(reply.ran.deploy).toBe(0);
    expect(reply.approvals).toEqual([]);
    expect(reply.seen).toHaveLength(1);
    expect(reply.seen[0]).toMatchObject({ type: 'execution-denied' });
    expect(reply.seen[0]!.reason).toMatch(
      /pending, not performed yet.*Retry the identical call after \d{4}-\d\d-\d\dT/,
    );
    expect(reply.text).toBe('I will retry later.');
  });
});

/** What the model is told, before the tool's own text, of a call a person approved with the path changed. */
const EDITED =
  'agent-judge: a person approved this call with edits; it ran as edited, not as sent: ' +
  'parameters.arguments.path: "/etc/passwd" -> "/tmp/safe.txt"';

describe('the Vercel AI SDK 7 adapter: what runs', () => {
  it('approved with edits by a person: runs once exactly as edited, the model is told, recorded ok', async () => {
    const app = startApp(accessTo(short));
    const text = `note ${randomUUID()}`;
    const first = await app.generate({
      prompt: 'save my note',
      steps: [call('e1', 'write_file', { path: '/etc/passwd', text })],
    });
    expect(first.approvals).toHaveLength(1);
    expect(first.ran.write_file).toBe(0);
    const held = first.pending[0]!;
    await decide(sys.client, held.proposalId, {
      decision: 'approve',
      approver: 'scott',
      edits: [{ path: 'parameters.arguments.path', value: '/tmp/safe.txt' }],
    });
    const resumed = await app.generate({ resume: true, steps: [{ text: 'Saved it where the approver said.' }] });
    expect(resumed.error).toBeUndefined();
    // The tool ran once, with the person's path, never the model's.
    expect(resumed.written).toEqual([{ path: '/tmp/safe.txt', text }]);
    expect(resumed.ran.write_file).toBe(1);
    expect(resumed.seen).toEqual([
      {
        type: 'text',
        value: `${EDITED}\nwrote ${text.length} characters to /tmp/safe.txt`,
      },
    ]);
    expect(resumed.text).toBe('Saved it where the approver said.');
    expect(await getStatus(sys.client, held.proposalId)).toMatchObject({
      status: 'executed',
      caller: { outcome: 'ok' },
      edited: { changes: [{ path: 'parameters.arguments.path', from: '/etc/passwd', to: '/tmp/safe.txt' }] },
    });
  });

  it('the gate service out of reach: no tool runs, not even a no-judge read; the model reads the refusal', async () => {
    const app = startApp({ url: await closedGateUrl(), token: accessTo(patient).token });
    const reply = await app.generate({
      prompt: 'read my note',
      steps: [call('u1', 'read_note', { path: 'notes/a.md' }), { text: 'agent-judge is not reachable.' }],
    });
    expect(reply.error).toBeUndefined();
    expect(reply.ran.read_note).toBe(0);
    expect(reply.approvals).toEqual([]);
    expect(reply.seen).toHaveLength(1);
    expect(reply.seen[0]).toMatchObject({ type: 'execution-denied' });
    expect(reply.seen[0]!.reason).toMatch(
      /^agent-judge REJECT: agent-judge's gate service at http:\/\/127\.0\.0\.1:\d+ could not be/,
    );
    expect(reply.seen[0]!.reason).toMatch(/Not performed\.$/);
    expect(reply.text).toBe('agent-judge is not reachable.');
  });

  it('an approved call whose tool throws is recorded failed; the model reads the error', async () => {
    // The SDK has no error answer of a tool's own (a tool returns its output or throws): a throw is the failure.
    const app = startApp(accessTo(short));
    const first = await app.generate({
      prompt: 'migrate',
      steps: [call('m1', 'migrate', { version: `${Date.now()}` })],
    });
    expect(first.approvals).toHaveLength(1);
    const held = first.pending[0]!;
    await decide(sys.client, held.proposalId, { decision: 'approve', approver: 'scott' });
    const resumed = await app.generate({ resume: true, steps: [{ text: 'The migration failed.' }] });
    expect(resumed.error).toBeUndefined();
    expect(resumed.ran.migrate).toBe(1);
    expect(resumed.seen).toEqual([{ type: 'error-text', value: 'Error: the database refused the migration' }]);
    expect(resumed.text).toBe('The migration failed.');
    expect(await getStatus(sys.client, held.proposalId)).toMatchObject({
      status: 'failed',
      caller: { outcome: 'upstream_failure', detail: 'the database refused the migration' },
    });
  });

  it('a grant covers the identical call and nothing else: it runs at once, another service is held', async () => {
    const app = startApp(accessTo(short));
    const [service, other] = [`svc-${randomUUID().slice(0, 8)}`, `svc-${randomUUID().slice(0, 8)}`];
    const first = await app.generate({ prompt: 'deploy it', steps: [call('g1', 'deploy', { service })] });
    expect(first.approvals).toHaveLength(1);
    await decide(sys.client, first.pending[0]!.proposalId, { decision: 'approve', approver: 'scott' });
    // The person grants the identical call (the CLI's decide ... --grant-for); the approved one runs.
    const grantId = await grantIdenticalCalls(sys, bed.grants, first.pending[0]!.proposalId);
    expect((await app.generate({ resume: true, steps: [{ text: 'Deployed.' }] })).ran.deploy).toBe(1);

    // The identical call again, in a new conversation: covered by the grant, it runs at once; no approval request.
    const later = startApp(accessTo(short));
    const again = await later.generate({
      prompt: 'again',
      steps: [call('g2', 'deploy', { service }), { text: 'Done.' }],
    });
    expect(again.error).toBeUndefined();
    expect(again.approvals).toEqual([]);
    expect(again.seen).toEqual([{ type: 'text', value: `deployed ${service}` }]);
    expect(again.ran.deploy).toBe(1);
    // Another service is not what the grant says: held for a person, not run.
    const elsewhere = await later.generate({ prompt: 'other', steps: [call('g3', 'deploy', { service: other })] });
    expect(elsewhere.approvals).toHaveLength(1);
    expect(elsewhere.pending).toMatchObject([{ waitingFor: 'human', status: 'awaiting_human' }]);
    expect(elsewhere.ran.deploy).toBe(1);
    expect(await onlyUseOf(sys, grantId)).toMatchObject({
      status: 'executed',
      proposal: { agent_id: '@engineering', parameters: { arguments: { service } } },
    });
  });

  it('a limit refuses by its name: past the proposal limit nothing runs, the model reads the limit', async () => {
    const { service, agent } = await startLimitedService(sys);
    try {
      const app = startApp(accessTo(service, agent));
      const seen = [];
      for (let i = 0; i <= PROPOSAL_LIMIT; i++) {
        // The limit counts with visibility, which lags the starts: the last call comes once the others are listed.
        if (i === PROPOSAL_LIMIT) await proposalsVisible(sys, agent, PROPOSAL_LIMIT);
        const steps = [call(`l${i}`, 'deploy', { service: `svc-${randomUUID().slice(0, 8)}` }), { text: 'Not now.' }];
        const reply = await app.generate({ prompt: 'deploy it', pending: 'answer', steps });
        expect(reply.ran.deploy).toBe(0);
        seen.push(...reply.seen);
      }
      expect(seen).toHaveLength(PROPOSAL_LIMIT + 1);
      expect(seen.slice(0, PROPOSAL_LIMIT).map((s) => s.reason)).toEqual(
        Array(PROPOSAL_LIMIT).fill(expect.stringMatching(/^agent-judge: pending, not performed yet/)),
      );
      expect(seen[PROPOSAL_LIMIT]!.reason).toMatch(limitRefusal(agent));
      expect(seen[PROPOSAL_LIMIT]!.reason).toMatch(/Not performed/);
    } finally {
      await service.close();
    }
  });
});
