/**
 * What the in-process framework adapter benches share (bench/langchain.ts, bench/openai-agents.ts): workers on the
 * bench's server whose judge is a loopback Ollama-API model that approves at once, a gate with the two tools every
 * adapter bench calls (`read_note`, no-judge; `comment`, a lightweight issue comment), and the added-latency rows.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { McpRuleSchema } from '../src/contracts/mcp';
import { createGate, type Gate } from '../src/gate';
import { createJudgeDepsFromEnv } from '../src/judge';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { answerJson, startFakeOllama } from '../test/helpers/fake-ollama';
import { percentileOf, rotated, summarize, type BenchServer, type Row } from './lib';

export interface AdapterBenchSystem {
  gate: Gate;
  stop: () => Promise<void>;
}

/** Workers and a gate for `redeemer` (e.g. `langchain:bench`); `stop` ends both and the loopback model. */
export async function startAdapterBench(server: BenchServer, redeemer: string): Promise<AdapterBenchSystem> {
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
  const queues = taskQueuesFor(`bench-${redeemer.replace(/[^a-z0-9]+/gi, '-')}-${randomUUID()}`);
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
    performer: { agentId: '@engineering', redeemer },
    holdMs: 10_000,
  });
  return {
    gate,
    stop: async () => {
      await system.stop();
      await fake.close();
    },
  };
}

export type AdapterTier = 'no-judge' | 'lightweight';
export type AdapterPath = 'adapter' | 'no adapter';

/**
 * Times `once` for each tier with and without the adapter, pairs interleaved (the order rotates each round), after a
 * warm-up; `judgedN` lightweight calls, 4x as many no-judge ones. Returns both tiers' rows, the adapter's noting the
 * p50 / p95 it adds. `stop` runs whatever happens.
 */
export async function interleavedAdapterRows(o: {
  judgedN: number;
  once: (tier: AdapterTier, path: AdapterPath) => Promise<number>;
  stop: () => Promise<void>;
  /** What one sample is (`agent turn`, `run`), and the plain row's note. */
  unit: string;
  note: string;
  /** The adapter's name in its rows. */
  adapter: string;
}): Promise<Row[]> {
  const warmup = 5;
  const tiers: AdapterTier[] = ['no-judge', 'lightweight'];
  const paths: AdapterPath[] = ['adapter', 'no adapter'];
  const samples = new Map<string, number[]>();
  try {
    for (const tier of tiers) {
      const n = tier === 'no-judge' ? o.judgedN * 4 : o.judgedN;
      for (let round = 0; round < warmup + n; round++) {
        for (const path of rotated(paths, round)) {
          const ms = await o.once(tier, path);
          if (round >= warmup) samples.set(`${tier}|${path}`, [...(samples.get(`${tier}|${path}`) ?? []), ms]);
        }
      }
    }
  } finally {
    await o.stop();
  }
  return tiers.flatMap((tier) =>
    addedLatencyRows(tier, o.unit, o.note, samples.get(`${tier}|no adapter`) ?? [], {
      name: o.adapter,
      samples: samples.get(`${tier}|adapter`) ?? [],
    }),
  );
}

/** The two rows of one tier: the plain turn, and the adapter's with the p50 / p95 it adds as its note. */
function addedLatencyRows(
  tier: string,
  unit: string,
  note: string,
  plain: readonly number[],
  adapter: { name: string; samples: readonly number[] },
): Row[] {
  const added = (q: number) => {
    const d = percentileOf(adapter.samples, q) - percentileOf(plain, q);
    return `${d >= 0 ? '+' : ''}${d.toFixed(2)}`;
  };
  return [
    summarize(`${tier}: ${unit}, no adapter`, plain, note),
    summarize(`${tier}: ${unit}, ${adapter.name}`, adapter.samples, `${added(50)} p50 / ${added(95)} p95`),
  ];
}
