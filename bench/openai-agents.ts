/**
 * What the OpenAI Agents SDK adapter (`agent-judge/openai-agents`, issue 24) adds to a tool call: one `run()` of a
 * real `Agent` (the SDK's own `ScriptedModel` asks for one tool call, the tool runs, the model answers) with
 * `withAgentJudge` and the same run without it, interleaved sample by sample. Tiers: a no-judge read (no proposal)
 * and a lightweight issue comment (a proposal judged by a loopback Ollama-API model that approves at once, leased,
 * performed, its outcome reported inside the timing: the judged tool's `invoke` reports before it returns). Every
 * comment has content of its own (a new proposal). The added latency is the adapter's run minus the plain run, at
 * p50 and at p95.
 *
 * Sizes: BENCH_AGENTS_N runs per judged row (default 40), 4x as many no-judge runs.
 */
import { randomUUID } from 'node:crypto';
import { Agent, run, setTracingDisabled, tool } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing';
import { z } from 'zod';
import { withAgentJudge } from '../src/adapters/openai-agents';
import { interleavedAdapterRows, startAdapterBench, type AdapterPath, type AdapterTier } from './adapter-system';
import type { BenchServer, Row } from './lib';

const JUDGED_N = Number(process.env.BENCH_AGENTS_N ?? 40);

export async function benchOpenAiAgents(server: BenchServer): Promise<Row[]> {
  setTracingDisabled(true);
  const { gate, stop } = await startAdapterBench(server, 'openai-agents:bench');
  let ran = 0;
  const tools = [
    tool({
      name: 'read_note',
      description: 'Read a note from the vault',
      parameters: z.object({ path: z.string() }),
      execute: ({ path }) => (ran++, `contents of ${path}`),
    }),
    tool({
      name: 'comment',
      description: 'Comment on the issue',
      parameters: z.object({ body: z.string() }),
      execute: () => (ran++, 'commented'),
    }),
  ];
  const model = new ScriptedModel();
  const plain = new Agent({ name: 'assistant', instructions: 'Help.', model, tools });
  const agents: Record<AdapterPath, Agent> = {
    adapter: withAgentJudge(plain, { gate }),
    'no adapter': plain,
  };

  /** One run with one tool call: its latency (ms). Fails unless the tool ran once and the run ended with the answer. */
  async function once(tier: AdapterTier, path: AdapterPath): Promise<number> {
    const callId = randomUUID();
    const call =
      tier === 'no-judge'
        ? functionCall('read_note', { path: 'notes/a.md' }, { callId })
        : functionCall('comment', { body: `Looks good to me (${callId}).` }, { callId });
    model.enqueue([call]);
    model.enqueue([assistantMessage('done')]);
    const before = ran;
    const start = performance.now();
    const result = await run(agents[path], 'go');
    const ms = performance.now() - start;
    if (ran !== before + 1 || result.finalOutput !== 'done' || result.interruptions.length > 0) {
      throw new Error(
        `bench: ${tier} ${path}: the tool ran ${ran - before} times, ${result.interruptions.length} interruptions, ` +
          `final output ${JSON.stringify(result.finalOutput)}`,
      );
    }
    return ms;
  }

  return interleavedAdapterRows({
    judgedN: JUDGED_N,
    once,
    stop,
    unit: 'run',
    note: 'Agent + run(), ScriptedModel, one tool call',
    adapter: 'withAgentJudge',
  });
}
