/**
 * `npm run bench`: starts its own Temporal dev server (in memory) and prints latency, throughput and CPU tables as
 * medians and percentiles over repeated runs, each target of issue 12 beside its figure. Timing lives here, never in
 * tests. BENCH_ONLY=proposals,history,cli,judge,discord,circles,archive,replay,metrics,reports,capabilities,mcp,hooks,
 * ai-sdk,langchain,openai-agents,openclaw,inbox,grants,fatigue,flood,judge-model picks sections (default: all;
 * judge-model skips itself without its model file).
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { freePort, startDevServer } from '../src/devserver/server';
import { telemetryOptions } from '../src/metrics/telemetry';
import { createLogger } from '../src/cli/shared';
import { findTemporalCli } from '../src/devserver/temporal-cli';
import { machineHeader, printColumns, printTable, printTargets, type BenchServer } from './lib';

// Metrics exported as the product ships them (`dev` serves /metrics by default): their cost is in every figure.
Runtime.install({
  logger: new DefaultLogger('ERROR'),
  telemetryOptions: telemetryOptions({ prometheus: `127.0.0.1:${await freePort()}` }),
});

type Section = { name: string; run: (server: BenchServer) => Promise<void> };

/** A section that prints one table. */
const table =
  (title: string, rows: (server: BenchServer) => Promise<Parameters<typeof printTable>[1]>) =>
  async (server: BenchServer) =>
    printTable(title, await rows(server));

const sections: Section[] = [
  {
    name: 'proposals',
    run: async (server) => {
      const { benchProposals, PROPOSAL_BENCH_SIZES: s } = await import('./proposals');
      const result = await benchProposals(server);
      printTable(
        `Proposal workflow: submit -> final outcome, one at a time (${s.N} per row, interleaved in rounds of ` +
          `${s.BATCH}; note: p50 / p95 as a ratio to the empty workflow's)`,
        result.latency,
      );
      // BENCH_THROUGHPUT_N=0 measures latency only: no throughput or CPU table of empty rows.
      if (s.THROUGHPUT_N > 0) {
        printTable(
          `Throughput, ${s.CONCURRENCY} concurrent submitters (${s.THROUGHPUT_N} per row, interleaved in rounds of ` +
            `${s.THROUGHPUT_BATCH}; latencies under that load)`,
          result.throughput,
        );
        printColumns(
          `CPU per operation, ms, at ${s.CONCURRENCY} in flight (CPU time over the throughput rounds / ` +
            'operations; the workers and the client share this process)',
          ['measure', 'n', 'total', 'workers + client', 'server', 'x empty'],
          result.cpu,
        );
      }
      printTargets('Issue 12 targets: proposals', result.targets);
    },
  },
  {
    name: 'history',
    run: async (server) => {
      const { benchHistoryCounts, HISTORY_COLUMNS } = await import('./history-count');
      printColumns(
        'History per proposal, read from the real runs (issue 43): the proposal and its proposal_id reservation, ' +
          'when the submitter has its answer and once closed',
        HISTORY_COLUMNS,
        await benchHistoryCounts(server),
      );
    },
  },
  {
    name: 'cli',
    run: async (server) => {
      const { benchCli, cliTargets } = await import('./cli');
      const rows = await benchCli(server);
      printTable('CLI start-up: wall time of a new process (the built CLI, dist/)', rows);
      printTargets('Issue 12 targets: CLI (median)', cliTargets(rows));
    },
  },
  { name: 'judge', run: table('Judge (issue 3)', async (s) => (await import('./judge')).benchJudge(s)) },
  {
    name: 'discord',
    run: table('Discord escalation (issue 4)', async (s) => (await import('./discord')).benchDiscord(s)),
  },
  {
    name: 'circles',
    run: table('Trust circles (issue 5)', async (s) => (await import('./circles')).benchCircles(s)),
  },
  {
    name: 'archive',
    run: table('History archive (issue 11)', async (s) => (await import('./archive')).benchArchive(s)),
  },
  {
    name: 'replay',
    run: table('Replay of recorded proposals (issue 41)', async (s) => (await import('./replay')).benchReplay(s)),
  },
  {
    name: 'metrics',
    run: table('What live metrics cost a decision (issue 11): two worker processes, interleaved', async (s) =>
      (await import('./metrics-cost')).benchMetricsCost(s),
    ),
  },
  {
    name: 'reports',
    run: table('Reports: 10,000 proposals (issue 11), ms', async () => (await import('./reports')).benchReports()),
  },
  {
    name: 'capabilities',
    run: table('Capability tokens (issue 10): issue and verify interleaved, p50 / p95 in ms', async (s) =>
      (await import('./capabilities')).benchCapabilities(s),
    ),
  },
  {
    name: 'mcp',
    run: table('MCP proxy relay overhead (issue 10)', async (s) => (await import('./mcp')).benchMcp(s)),
  },
  {
    name: 'hooks',
    run: async (server) => {
      const { rows, targets } = await (await import('./hooks')).benchHooks(server);
      printTable("Coding-agent hooks: the latency a hook adds to a tool call (issue 23; Claude Code's input)", rows);
      printTargets('Issue 23 targets: hooks', targets);
    },
  },
  {
    name: 'langchain',
    run: table(
      'LangChain adapter: one createAgent turn with one tool call, with and without agentJudgeMiddleware ' +
        '(issue 24; interleaved; note: the p50 / p95 the adapter adds, ms)',
      async (s) => (await import('./langchain')).benchLangchain(s),
    ),
  },
  {
    name: 'inbox',
    run: table(
      'Web inbox: time from an escalation to its page and to the pending list showing it (issue 25; ms)',
      async (s) => (await import('./inbox')).benchInbox(s),
    ),
  },
  {
    name: 'openai-agents',
    run: table(
      'OpenAI Agents SDK adapter: one run() with one tool call, with and without withAgentJudge (issue 24; ' +
        'interleaved; note: the p50 / p95 the adapter adds, ms)',
      async (s) => (await import('./openai-agents')).benchOpenAiAgents(s),
    ),
  },
  {
    name: 'openclaw',
    run: table(
      'OpenClaw plugin: the latency its before_tool_call adds to a tool call (handlers called in process, the real ' +
        'gate; interleaved; note: the p50 / p95 the plugin adds, ms)',
      async (s) => (await import('./openclaw')).benchOpenClaw(s),
    ),
  },
  {
    name: 'ai-sdk',
    run: table('Vercel AI SDK 7 adapter: the latency it adds to a tool call (generateText, Node 22)', async (s) =>
      (await import('./ai-sdk')).benchAiSdk(s),
    ),
  },
  {
    name: 'grants',
    run: table('Scoped grants (issue 25): lookup and use on the lightweight path, submit -> final outcome', async (s) =>
      (await import('./grants')).benchGrants(s),
    ),
  },
  {
    name: 'fatigue',
    run: table('Approval fatigue (issue 25): human decisions in a scripted coding-agent session', async (s) =>
      (await import('./grants')).benchApprovalFatigue(s),
    ),
  },
  {
    name: 'flood',
    run: table("One agent's flood and another's latency (issue 21): second agent's lightweight proposals", async (s) =>
      (await import('./flood')).benchFlood(s),
    ),
  },
  {
    name: 'judge-model',
    run: table('Judge on the real 270M model (issue 13; needs the GGUF, see docs/judge.md)', async () =>
      (await import('./judge-model')).benchJudgeModel(),
    ),
  },
];

const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
const cliPath = findTemporalCli({ logger: createLogger() });
const server = await startDevServer({ cliPath, headless: true, readyTimeoutMs: 90_000 });
console.log(`# agent-judge bench (Temporal dev server ${server.address}, in memory)`);
for (const line of machineHeader(cliPath)) console.log(`# ${line}`);
let failed = false;
try {
  for (const section of sections) {
    if (only && !only.includes(section.name)) continue;
    try {
      await section.run({ address: server.address, namespace: server.namespace, pid: server.process.pid });
    } catch (err) {
      failed = true;
      console.error(`bench ${section.name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
  }
} finally {
  await server.stop();
}
process.exit(failed ? 1 : 0);
