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
import { AIMessage, createAgent, fakeModel, tool, type AgentMiddleware } from 'langchain';
import { z } from 'zod';
import { agentJudgeMiddleware } from '../src/adapters/langchain';
import { interleavedAdapterRows, startAdapterBench, type AdapterPath, type AdapterTier } from './adapter-system';
import type { BenchServer, Row } from './lib';

const JUDGED_N = Number(process.env.BENCH_LANGCHAIN_N ?? 40);

export async function benchLangchain(server: BenchServer): Promise<Row[]> {
  const { gate, stop } = await startAdapterBench(server, 'langchain:bench');
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
  const agents: Record<AdapterPath, ReturnType<typeof agentWith>> = {
    adapter: agentWith([agentJudgeMiddleware({ gate })]),
    'no adapter': agentWith([]),
  };

  /** One agent turn with one tool call: its latency (ms). Fails unless the tool ran once and the turn ended. */
  async function once(tier: AdapterTier, path: AdapterPath): Promise<number> {
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

  return interleavedAdapterRows({
    judgedN: JUDGED_N,
    once,
    stop,
    unit: 'agent turn',
    note: 'createAgent, fakeModel(), one tool call',
    adapter: 'agentJudgeMiddleware',
  });
}
