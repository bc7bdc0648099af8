/**
 * What the LangChain adapter (`agent-judge/langchain`, issue 24) adds to a tool call: one `createAgent` turn (the
 * scripted model asks for one tool call, the tool runs, the model answers) with `agentJudgeMiddleware` and the same
 * turn without it, interleaved sample by sample. Tiers: a no-judge read (no proposal) and a lightweight issue comment
 * (a proposal judged by a loopback Ollama-API model that approves at once, leased, performed, its outcome reported
 * inside the timing: the middleware reports before it hands the ToolMessage back). Every comment has content of its
 * own (a new proposal). The added latency is the adapter's turn minus the plain turn, at p50 and at p95.
 *
 * Sizes: BENCH_LANGCHAIN_N turns per judged row (default 40), 4x as many no-judge turns.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { AIMessage, createAgent, fakeModel, tool, type AgentMiddleware } from 'langchain';
import { z } from 'zod';
import { agentJudgeMiddleware } from '../src/adapters/langchain';
import { McpRuleSchema } from '../src/contracts/mcp';
import { createGate } from '../src/gate';
import { createJudgeDepsFromEnv } from '../src/judge';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { answerJson, startFakeOllama } from '../test/helpers/fake-ollama';
import { percentileOf, rotated, summarize, type BenchServer, type Row } from './lib';

const JUDGED_N = Number(process.env.BENCH_LANGCHAIN_N ?? 40);
const READ_N = JUDGED_N * 4;
const WARMUP = 5;
type Tier = 'no-judge' | 'lightweight';
type Path = 'adapter' | 'no adapter';
const PATHS: Path[] = ['adapter', 'no adapter'];

export async function benchLangchain(server: BenchServer): Promise<Row[]> {
  const fake = await startFakeOllama({ respond: () => ({ content: answerJson('APPROVE', 0.9, 'the task asks it') }) });
  const policy = defaultPolicyWith({
    judge: {
      withoutModel: 'escalate',
      apiKeyEnv: 'OLLAMA_API_KEY',
      timeoutMs: 5_000,
      seed: 0,
      allowedEvidenceHosts: [],
      model: 'bench',
      host: fake.host,
    },
  });
  const queues = taskQueuesFor(`bench-langchain-${randomUUID()}`);
  const system = await startWorkersInProcess(server.address, {
    namespace: server.namespace,
    taskQueues: queues,
    policy,
    logger: pino({ level: 'silent' }),
    judge: createJudgeDepsFromEnv(policy, {}),
  });
  const gate = createGate({
    client: system.client,
    taskQueue: queues.workflow,
    rules: {
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
    },
    performer: { agentId: '@engineering', redeemer: 'langchain:bench' },
    holdMs: 10_000,
  });
  let ran = 0;
  const tools = [
    tool(({ path }) => (ran++, `contents of ${path}`), {
      name: 'read_note',
      description: 'Read a note from the vault',
      schema: z.object({ path: z.string() }),
    }),
    tool(() => (ran++, 'commented'), {
      name: 'comment',
      description: 'Comment on the issue',
      schema: z.object({ body: z.string() }),
    }),
  ];
  const model = fakeModel();
  const agentWith = (middleware: AgentMiddleware[]) => createAgent({ model, tools, middleware });
  const agents: Record<Path, ReturnType<typeof agentWith>> = {
    adapter: agentWith([agentJudgeMiddleware({ gate })]),
    'no adapter': agentWith([]),
  };

  /** One agent turn with one tool call: its latency (ms). Fails unless the tool ran once and the turn ended. */
  async function once(tier: Tier, path: Path): Promise<number> {
    const id = randomUUID();
    const call =
      tier === 'no-judge'
        ? { name: 'read_note', args: { path: 'notes/a.md' }, id }
        : { name: 'comment', args: { body: `Looks good to me (${id}).` }, id };
    model.respondWithTools([call]).respond(new AIMessage('done'));
    const before = ran;
    const start = performance.now();
    const result = await agents[path].invoke({ messages: [{ role: 'user', content: 'go' }] });
    const ms = performance.now() - start;
    const last = result.messages.at(-1);
    if (ran !== before + 1 || last?.text !== 'done') {
      const seen = result.messages.map((m) => m.text).join(' | ');
      throw new Error(`bench: ${tier} ${path}: the tool ran ${ran - before} times; ${seen.slice(0, 400)}`);
    }
    return ms;
  }

  const samples = new Map<string, number[]>();
  const add = (key: string, ms: number) => samples.set(key, [...(samples.get(key) ?? []), ms]);
  try {
    for (const tier of ['no-judge', 'lightweight'] as const) {
      const n = tier === 'no-judge' ? READ_N : JUDGED_N;
      for (let round = 0; round < WARMUP + n; round++) {
        for (const path of rotated(PATHS, round)) {
          const ms = await once(tier, path);
          if (round >= WARMUP) add(`${tier}|${path}`, ms);
        }
      }
    }
  } finally {
    await system.stop();
    await fake.close();
  }

  const rows: Row[] = [];
  for (const tier of ['no-judge', 'lightweight'] as const) {
    const judged = samples.get(`${tier}|adapter`) ?? [];
    const plain = samples.get(`${tier}|no adapter`) ?? [];
    const added = (q: number) => {
      const d = percentileOf(judged, q) - percentileOf(plain, q);
      return `${d >= 0 ? '+' : ''}${d.toFixed(2)}`;
    };
    rows.push(summarize(`${tier}: agent turn, no adapter`, plain, 'createAgent, fakeModel(), one tool call'));
    rows.push(summarize(`${tier}: agent turn, agentJudgeMiddleware`, judged, `${added(50)} p50 / ${added(95)} p95`));
  }
  return rows;
}
