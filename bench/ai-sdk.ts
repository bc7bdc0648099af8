/**
 * What the AI SDK adapter (`agent-judge/ai-sdk`) adds to each tool call: the real `generateText` of `ai` 7 with its
 * scripted model (`MockLanguageModelV4`: one tool call, then the final text), timed around the whole call, with the
 * same tools plain and spread through `withAgentJudge(tools, { gate })`, rows interleaved call by call in one Node 22
 * process (`ai` 7 needs Node 22: the test tools' Node 22 and `ai`, scripts/test-tools.mjs), importing the built
 * package. Tiers: a no-judge read (no proposal) and a lightweight call (an `issue_comment` of its own content each
 * time: a new proposal, approved by the lightweight rules, leased, run, and its outcome reported inside the timing, as
 * the wrapped `execute` awaits the report). The difference of the medians is the adapter's added latency per call.
 *
 * Sizes: BENCH_AI_SDK_N calls per lightweight row (default 40), 4x as many no-judge reads.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { McpRuleSchema } from '../src/contracts/mcp';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { ensureNode22Tools } from '../scripts/test-tools.mjs';
import { summarize, type BenchServer, type Row } from './lib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LIGHT_N = Number(process.env.BENCH_AI_SDK_N ?? 40);
const READ_N = LIGHT_N * 4;
const WARMUP = 5;

/** The Node 22 application: runs every row in turn, `rounds` times, and prints `{ row: [ms...] }` as JSON. */
const APP = `
import { generateText, jsonSchema, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { connectClient } from 'agent-judge/client';
import { createGate } from 'agent-judge/gate';
import { withAgentJudge } from 'agent-judge/ai-sdk';

const [address, namespace, taskQueue, rulesJson, readN, lightN, warmup] = process.argv.slice(2);
const client = await connectClient({ address, namespace });
const gate = createGate({
  client,
  taskQueue,
  rules: JSON.parse(rulesJson),
  performer: { agentId: '@bench', redeemer: 'ai-sdk:bench' },
  holdMs: 30_000,
});
const schema = (name) => jsonSchema({ type: 'object', properties: { [name]: { type: 'string' } }, required: [name] });
const tools = {
  read_note: tool({
    description: 'Read a note',
    inputSchema: schema('path'),
    execute: async ({ path }) => 'contents of ' + path,
  }),
  comment: tool({ description: 'Comment on the issue', inputSchema: schema('body'), execute: async () => 'commented' }),
};
const judged = withAgentJudge(tools, { gate });
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
let n = 0;
async function once(tier, adapter) {
  const id = 'c' + n++;
  const input =
    tier === 'no-judge' ? { path: 'notes/a.md' } : { body: 'Looks good to me, run ' + id + ' ' + Math.random() };
  const toolName = tier === 'no-judge' ? 'read_note' : 'comment';
  const turns = [
    {
      content: [{ type: 'tool-call', toolCallId: id, toolName, input: JSON.stringify(input) }],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage,
      warnings: [],
    },
    { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
  ];
  const model = new MockLanguageModelV4({ doGenerate: async () => turns.shift() });
  const settings = adapter ? { model, ...judged } : { model, tools };
  const start = performance.now();
  const result = await generateText({ ...settings, prompt: 'go', stopWhen: ({ steps }) => steps.length >= 2 });
  const ms = performance.now() - start;
  const output = result.steps[0]?.toolResults[0]?.output;
  if (result.text !== 'done' || typeof output !== 'string' || output.startsWith('agent-judge')) {
    const how = tier + (adapter ? ' with' : ' without') + ' the adapter';
    throw new Error('bench: ' + how + ' did not run the tool: ' + JSON.stringify(result.content));
  }
  return ms;
}
const samples = { 'no-judge plain': [], 'no-judge adapter': [], 'lightweight plain': [], 'lightweight adapter': [] };
const every = Math.max(1, Math.round(Number(readN) / Number(lightN)));
// Each round: a no-judge call without and with the adapter; every "every"-th round a lightweight pair too. Each
// pair's order alternates, so neither side always goes first.
for (let r = 0; r < Number(readN) + Number(warmup); r++) {
  const order = [];
  const pair = (tier, flip) => (flip ? [[tier, true], [tier, false]] : [[tier, false], [tier, true]]);
  order.push(...pair('no-judge', r % 2 === 1));
  if (r % every === 0) order.push(...pair('lightweight', Math.floor(r / every) % 2 === 1));
  for (const [tier, adapter] of order) {
    const ms = await once(tier, adapter);
    if (r >= Number(warmup)) samples[tier + (adapter ? ' adapter' : ' plain')].push(ms);
  }
}
process.stdout.write(JSON.stringify(samples) + '\\n');
await client.connection.close();
`;

export async function benchAiSdk(server: BenchServer): Promise<Row[]> {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--if-stale'], { stdio: 'ignore' });
  const { node22, aiSdk } = ensureNode22Tools();
  const dir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-ai-sdk-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(aiSdk, join(dir, 'node_modules/ai'));
  symlinkSync(ROOT, join(dir, 'node_modules/agent-judge'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(join(dir, 'app.mjs'), APP);
  const policy = defaultPolicyWith({}, { baseDir: dir });
  const queues = taskQueuesFor(`bench-ai-sdk-${randomUUID()}`);
  const system = await startWorkersInProcess(server.address, {
    namespace: server.namespace,
    taskQueues: queues,
    policy,
    logger: pino({ level: 'silent' }),
    baseDir: dir,
  });
  const rules = {
    rules: [
      { name: 'ai.read', server: 'ai-sdk', tool: 'read_note', tier: 'no-judge' },
      {
        name: 'ai.comment',
        server: 'ai-sdk',
        tool: 'comment',
        actionType: 'issue_comment',
        target: { repo: 'a/b', issue: 1 },
        parameters: { body: '$.body' },
      },
    ].map((r) => McpRuleSchema.parse(r)),
  };
  try {
    const args = [server.address, server.namespace, queues.workflow, JSON.stringify(rules)];
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(node22, [join(dir, 'app.mjs'), ...args, String(READ_N), String(LIGHT_N), String(WARMUP)], {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`bench: ai-sdk app: ${stderr}`))));
    });
    const samples = JSON.parse(out) as Record<string, number[]>;
    const rows: Row[] = [];
    for (const tier of ['no-judge', 'lightweight']) {
      const plain = summarize(`${tier}: generateText, plain tools`, samples[`${tier} plain`] ?? []);
      const judged = summarize(
        `${tier}: generateText, ...withAgentJudge(tools, { gate })`,
        samples[`${tier} adapter`] ?? [],
      );
      rows.push(plain, judged, {
        name: `${tier}: added by the adapter (difference of the percentiles)`,
        n: judged.n,
        p50: judged.p50! - plain.p50!,
        p95: judged.p95! - plain.p95!,
        p99: judged.p99! - plain.p99!,
      });
    }
    return rows;
  } finally {
    await system.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
