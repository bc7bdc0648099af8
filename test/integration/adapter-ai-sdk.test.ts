/**
 * The Vercel AI SDK 7 adapter (`agent-judge/ai-sdk`) driving the real `generateText` of `ai` 7 with the SDK's own
 * scripted model (`MockLanguageModelV4` from `ai/test`), against the real dev server and workers this file starts.
 * `ai` 7 needs Node 22, so the application runs as a Node 22 child process (the test tools' Node 22 and their `ai`,
 * scripts/test-tools.mjs) importing the built package (dist/, through a consumer folder whose node_modules links
 * `agent-judge` to this checkout and `ai` to the installed SDK). Its source ({@link APP}) is first type-checked
 * against `ai` 7's own declarations (strict, nodenext): the adapter's structural types must fit the real SDK's.
 * What the user sees: how often each tool really ran, what the model was given for each call, the final text, the
 * approval requests, and the proposal's recorded outcome.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decide, getStatus } from '../../src/client/proposals';
import { McpRuleSchema } from '../../src/contracts/mcp';
import { startSystem, type TestSystem } from '../helpers/system';
import { toolPath } from '../helpers/tools';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');
const run = promisify(execFile);

/**
 * The application, as a user writes it with `ai` 7 (TypeScript, run by Node 22's type stripping). It answers one JSON
 * command per stdin line with one JSON line: `generate` runs `generateText` on its conversation with the model's
 * scripted turns; `resume: true` first appends the application's own approval (`approved: true`) of every open
 * approval request, the SDK's way to resume a paused call.
 */
const APP = `
import { createInterface } from 'node:readline';
import { generateText, jsonSchema, stepCountIs, streamText, tool, ToolLoopAgent, type ModelMessage } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { connectClient } from 'agent-judge/client';
import { createGate, type GateAnswer, type GateRules } from 'agent-judge/gate';
import { AgentJudgePendingError, withAgentJudge } from 'agent-judge/ai-sdk';

type Step = { call: { id: string; tool: string; input: Record<string, unknown> } } | { text: string };
interface Command {
  steps: Step[];
  prompt?: string;
  resume?: boolean;
  messages?: ModelMessage[];
  ownApproval?: boolean;
  pending?: 'approval-request' | 'answer';
  /** streamText instead of generateText. */
  stream?: boolean;
  /** A ToolLoopAgent's generate() instead of generateText. */
  agent?: boolean;
}

const [address, namespace, taskQueue, holdMs, rulesJson] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const client = await connectClient({ address, namespace });
const gate = createGate({
  client,
  taskQueue,
  rules: JSON.parse(rulesJson) as GateRules,
  performer: { agentId: '@engineering', redeemer: 'ai-sdk:test' },
  holdMs: Number(holdMs),
});
const ran = { read_note: 0, deploy: 0, comment: 0 };
const object = (name: string) =>
  jsonSchema<Record<string, string>>({ type: 'object', properties: { [name]: { type: 'string' } }, required: [name] });
const tools = {
  read_note: tool({
    description: 'Read a note from the vault',
    inputSchema: object('path'),
    execute: async ({ path }) => {
      ran.read_note++;
      return \`contents of \${path}\`;
    },
  }),
  deploy: tool({
    description: 'Deploy a service to production',
    inputSchema: object('service'),
    execute: async ({ service }) => {
      ran.deploy++;
      return \`deployed \${service}\`;
    },
  }),
  comment: tool({
    description: 'Comment on the issue',
    inputSchema: object('body'),
    execute: async () => {
      ran.comment++;
      return 'commented';
    },
  }),
};
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

let conversation: ModelMessage[] = [];
type ModelMessageLike = { role: string; content: unknown };

/** streamText read to its end: its text, content and response, or the error its stream carried. */
async function streamed(settings: Parameters<typeof streamText<typeof tools>>[0]) {
  let failure: unknown;
  const result = streamText({ ...settings, onError: ({ error }) => void (failure = error) });
  try {
    const [text, content, response] = await Promise.all([result.text, result.content, result.response]);
    return { text, content, response };
  } catch (err) {
    throw failure ?? err;
  }
}

async function generate(cmd: Command) {
  const steps = [...cmd.steps];
  const seen: unknown[] = [];
  let modelCalls = 0;
  /** The model's next scripted turn, after recording the tool results it was given. */
  const turn = (prompt: Array<ModelMessageLike>) => {
    modelCalls++;
    const last = prompt.at(-1);
    if (last?.role === 'tool' && Array.isArray(last.content)) {
      for (const part of last.content) if (part.type === 'tool-result') seen.push(part.output);
    }
    const step = steps.shift();
    if (!step) throw new Error('unexpected model call');
    return 'text' in step
      ? { kind: 'text' as const, text: step.text, finishReason: { unified: 'stop' as const, raw: 'stop' } }
      : {
          kind: 'call' as const,
          call: {
            type: 'tool-call' as const,
            toolCallId: step.call.id,
            toolName: step.call.tool,
            input: JSON.stringify(step.call.input),
          },
          finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
        };
  };
  const model = new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const t = turn(prompt);
      const content = t.kind === 'text' ? [{ type: 'text' as const, text: t.text }] : [t.call];
      return { content, finishReason: t.finishReason, usage, warnings: [] };
    },
    doStream: async ({ prompt }) => {
      const t = turn(prompt);
      const body =
        t.kind === 'text'
          ? [
              { type: 'text-start' as const, id: 't' },
              { type: 'text-delta' as const, id: 't', delta: t.text },
              { type: 'text-end' as const, id: 't' },
            ]
          : [t.call];
      const finish = { type: 'finish' as const, finishReason: t.finishReason, usage };
      const start = { type: 'stream-start' as const, warnings: [] };
      return { stream: convertArrayToReadableStream([start, ...body, finish]) };
    },
  });
  if (cmd.messages) conversation = cmd.messages;
  let messages: ModelMessage[] = cmd.prompt ? [...conversation, { role: 'user', content: cmd.prompt }] : conversation;
  if (cmd.resume) {
    const open = messages.flatMap((m) =>
      m.role === 'assistant' && typeof m.content !== 'string'
        ? m.content.flatMap((p) => (p.type === 'tool-approval-request' ? [p.approvalId] : []))
        : [],
    );
    const response = (approvalId: string) => ({ type: 'tool-approval-response' as const, approvalId, approved: true });
    const responses = open.map(response);
    messages = [...messages, { role: 'tool', content: responses }];
  }
  const pending: GateAnswer[] = [];
  // The one line an application adds: the tools and the approval hook, behind the gate.
  const judged = withAgentJudge(tools, { gate, pending: cmd.pending, onPending: (a) => pending.push(a) });
  try {
    const settings = {
      model,
      ...judged,
      // The application's own approval hook in place of agent-judge's (the tools stay judged).
      ...(cmd.ownApproval ? { toolApproval: () => 'approved' as const } : {}),
      messages,
      stopWhen: stepCountIs(5),
    };
    const result = cmd.stream
      ? await streamed(settings)
      : cmd.agent
        ? // The same spread into the agent's settings; the conversation goes to generate().
          await new ToolLoopAgent({ model, ...judged, stopWhen: stepCountIs(5) }).generate({ messages })
        : await generateText(settings);
    conversation = [...messages, ...result.response.messages];
    const approvals = result.content.flatMap((p) =>
      p.type === 'tool-approval-request' && !p.isAutomatic
        ? [{ toolCallId: p.toolCall.toolCallId, reason: p.reason }]
        : [],
    );
    const unusedSteps = steps.length;
    return { ran, text: result.text, approvals, seen, pending, modelCalls, unusedSteps, messages: conversation };
  } catch (err) {
    const e = err as Error;
    const waiting = err instanceof AgentJudgePendingError ? err.answer : undefined;
    const error = { name: e.name, message: e.message, waiting };
    return { ran, error, seen, pending, modelCalls, unusedSteps: steps.length };
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  process.stdout.write(JSON.stringify(await generate(JSON.parse(line) as Command)) + '\\n');
}
await client.connection.close();
`;

interface Reply {
  ran: { read_note: number; deploy: number; comment: number };
  text?: string;
  approvals?: Array<{ toolCallId: string; reason?: string }>;
  seen: Array<{ type: string; value?: unknown; reason?: string }>;
  pending: Array<{ kind: 'pending'; proposalId: string; workflowId: string; waitingFor: string; status: string }>;
  modelCalls: number;
  unusedSteps: number;
  messages?: unknown[];
  error?: { name: string; message: string; waiting?: { proposalId: string; workflowId: string } };
}

type Step = { call: { id: string; tool: string; input: Record<string, unknown> } } | { text: string };

let sys: TestSystem;
let consumer: string;
const apps: App[] = [];

const rules = [
  { name: 'ai.read', server: 'ai-sdk', tool: 'read_note', tier: 'no-judge' },
  {
    name: 'ai.comment',
    server: 'ai-sdk',
    tool: 'comment',
    actionType: 'issue_comment',
    target: { repo: 'a/b', issue: 1 },
    parameters: { body: '$.body' },
  },
].map((r) => McpRuleSchema.parse(r));

beforeAll(async () => {
  sys = await startSystem({ spec: { escalation: { approvers: ['scott'], timeout: '10m' } } });
  consumer = mkdtempSync(join(tmpdir(), 'agent-judge-ai-sdk-'));
  mkdirSync(join(consumer, 'node_modules'));
  symlinkSync(toolPath('aiSdk'), join(consumer, 'node_modules/ai'));
  symlinkSync(REPO, join(consumer, 'node_modules/agent-judge'));
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(join(consumer, 'app.ts'), APP);
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noEmit: true,
        verbatimModuleSyntax: true,
        erasableSyntaxOnly: true,
        skipLibCheck: true,
        typeRoots: [join(REPO, 'node_modules/@types')],
        types: ['node'],
      },
      files: ['app.ts'],
    }),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  await sys?.stop();
  if (consumer) rmSync(consumer, { recursive: true, force: true });
});

/** The application in a Node 22 process of its own: one command in, one reply out. */
class App {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly replies: Array<(line: string) => void> = [];
  private stderr = '';

  constructor(holdMs: number) {
    this.child = spawn(
      toolPath('node22'),
      [
        join(consumer, 'app.ts'),
        inject('temporalAddress'),
        inject('temporalNamespace'),
        sys.taskQueues.workflow,
        String(holdMs),
        JSON.stringify({ rules }),
      ],
      { cwd: consumer, stdio: 'pipe' },
    );
    this.child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    createInterface({ input: this.child.stdout }).on('line', (line) => this.replies.shift()?.(line));
    apps.push(this);
  }

  generate(cmd: {
    steps: Step[];
    prompt?: string;
    resume?: boolean;
    messages?: unknown[];
    ownApproval?: boolean;
    pending?: string;
    stream?: boolean;
    agent?: boolean;
  }): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the application exited (${code}): ${this.stderr}`));
      this.child.once('exit', onExit);
      this.replies.push((line) => {
        this.child.off('exit', onExit);
        resolve(JSON.parse(line) as Reply);
      });
      this.child.stdin.write(`${JSON.stringify(cmd)}\n`);
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin.end();
    await exited;
  }
}

const call = (id: string, tool: string, input: Record<string, unknown>): Step => ({ call: { id, tool, input } });

describe('the Vercel AI SDK 7 adapter', () => {
  it("type-checks the application against ai 7's own declarations (strict, nodenext)", async () => {
    const typecheck = await run(process.execPath, [TSC, '-p', consumer], { cwd: consumer }).catch(
      (err: { stdout?: string; message?: string }) => ({ stdout: err.stdout ?? err.message ?? 'tsc failed' }),
    );
    expect(typecheck.stdout).toBe('');
  }, 120_000);

  it('runs a read-only tool the policy maps to no-judge, once', async () => {
    const app = new App(10_000);
    const reply = await app.generate({
      prompt: 'read my note',
      steps: [call('c1', 'read_note', { path: 'notes/a.md' }), { text: 'The note says: contents of notes/a.md' }],
    });
    expect(reply.error).toBeUndefined();
    expect(reply.ran).toEqual({ read_note: 1, deploy: 0, comment: 0 });
    expect(reply.seen).toEqual([{ type: 'text', value: 'contents of notes/a.md' }]);
    expect(reply.text).toBe('The note says: contents of notes/a.md');
    expect(reply.approvals).toEqual([]);
    expect(reply.unusedSteps).toBe(0);
  });

  it('pauses a call a person decides as the approval request; approved, a resumed run performs it once', async () => {
    const app = new App(500);
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
    const later = new App(10_000);
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
      capability: { redemption: { redeemer: 'ai-sdk:test' } },
    });
    expect(early.ran.deploy + resumed.ran.deploy).toBe(1);
  });

  it('a held call the person rejects: the resumed run does not run it, the model reads the REJECT', async () => {
    const app = new App(500);
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
    const app = new App(10_000);
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
    const app = new App(500);
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
    const app = new App(500);
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
    const app = new App(500);
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
    const app = new App(500);
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
