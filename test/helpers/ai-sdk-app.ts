/**
 * The Vercel AI SDK 7 application test/integration/adapter-ai-sdk.test.ts drives: its source ({@link APP}), the
 * consumer folder it runs from (its node_modules link `agent-judge` to this checkout and `ai` to the test tools' SDK),
 * and {@link App}, one Node 22 process of it (`ai` 7 needs Node 22; agent-judge itself runs on Node 20). Kept apart
 * from the test so the test reads as its cases.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { toolPath } from './tools';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The application, as a user writes it with `ai` 7 (TypeScript, run by Node 22's type stripping). It answers one JSON
 * command per stdin line with one JSON line: `generate` runs `generateText` on its conversation with the model's
 * scripted turns; `resume: true` first appends the application's own approval (`approved: true`) of every open
 * approval request, the SDK's way to resume a paused call.
 */
export const APP = `
import { createInterface } from 'node:readline';
import { generateText, jsonSchema, stepCountIs, streamText, tool, ToolLoopAgent, type ModelMessage } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import type { GateAnswer } from 'agent-judge/gate';
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

// Where agent-judge's gate service is, and this agent's token: all the application holds.
const [url, token] = process.argv.slice(2) as [string, string];
const ran = { read_note: 0, deploy: 0, comment: 0, write_file: 0, migrate: 0 };
const written: Array<{ path: string; text: string }> = [];
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
  write_file: tool({
    description: 'Write a text file',
    inputSchema: jsonSchema<{ path: string; text: string }>({
      type: 'object',
      properties: { path: { type: 'string' }, text: { type: 'string' } },
      required: ['path', 'text'],
    }),
    execute: async ({ path, text }) => {
      ran.write_file++;
      written.push({ path, text });
      return \`wrote \${text.length} characters to \${path}\`;
    },
  }),
  migrate: tool({
    description: 'Migrate the database',
    inputSchema: object('version'),
    execute: async (): Promise<string> => {
      ran.migrate++;
      throw new Error('the database refused the migration');
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
  const judged = withAgentJudge(tools, { url, token, pending: cmd.pending, onPending: (a) => pending.push(a) });
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
    const text = result.text;
    return { ran, written, text, approvals, seen, pending, modelCalls, unusedSteps, messages: conversation };
  } catch (err) {
    const e = err as Error;
    const waiting = err instanceof AgentJudgePendingError ? err.answer : undefined;
    const error = { name: e.name, message: e.message, waiting };
    return { ran, written, error, seen, pending, modelCalls, unusedSteps: steps.length };
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  process.stdout.write(JSON.stringify(await generate(JSON.parse(line) as Command)) + '\\n');
}
`;

export interface Reply {
  ran: { read_note: number; deploy: number; comment: number; write_file: number; migrate: number };
  written: Array<{ path: string; text: string }>;
  text?: string;
  approvals?: Array<{ toolCallId: string; reason?: string }>;
  seen: Array<{ type: string; value?: unknown; reason?: string }>;
  pending: Array<{ kind: 'pending'; proposalId: string; workflowId: string; waitingFor: string; status: string }>;
  modelCalls: number;
  unusedSteps: number;
  messages?: unknown[];
  error?: { name: string; message: string; waiting?: { proposalId: string; workflowId: string } };
}

export type Step = { call: { id: string; tool: string; input: Record<string, unknown> } } | { text: string };

/** A consumer folder with the application in it (and its tsconfig: strict, nodenext, against `ai` 7's declarations). */
export function makeConsumer(): string {
  const consumer = mkdtempSync(join(tmpdir(), 'agent-judge-ai-sdk-'));
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
  return consumer;
}

/** The application in a Node 22 process of its own: one command in, one reply out. */
export class App {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly replies: Array<(line: string) => void> = [];
  private stderr = '';

  constructor(consumer: string, gate: { url: string; token: string }) {
    this.child = spawn(toolPath('node22'), [join(consumer, 'app.ts'), gate.url, gate.token], {
      cwd: consumer,
      stdio: 'pipe',
    });
    this.child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    createInterface({ input: this.child.stdout }).on('line', (line) => this.replies.shift()?.(line));
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

export const call = (id: string, tool: string, input: Record<string, unknown>): Step => ({ call: { id, tool, input } });
