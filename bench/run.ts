/**
 * `npm run bench`: starts its own Temporal dev server (in memory) and prints latency and throughput
 * tables as medians and percentiles over repeated runs. Timing lives here, never in tests.
 * BENCH_ONLY=proposals,judge,discord,circles,judge-model picks sections.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { startDevServer } from '../src/devserver/server';
import { findTemporalCli } from '../src/devserver/temporal-cli';
import { printTable, type Row } from './lib';

Runtime.install({ logger: new DefaultLogger('ERROR') });

type Section = { name: string; title: string; run: (server: { address: string; namespace: string }) => Promise<Row[]> };

const sections: Section[] = [
  {
    name: 'proposals',
    title: 'Proposal workflow (issue 2)',
    run: async (s) => (await import('./proposals')).benchProposals(s),
  },
  { name: 'judge', title: 'Judge (issue 3)', run: async (s) => (await import('./judge')).benchJudge(s) },
  {
    name: 'discord',
    title: 'Discord escalation (issue 4)',
    run: async (s) => (await import('./discord')).benchDiscord(s),
  },
  { name: 'circles', title: 'Trust circles (issue 5)', run: async (s) => (await import('./circles')).benchCircles(s) },
  {
    name: 'judge-model',
    title: 'Judge on the real 270M model (issue 13; needs the GGUF, see docs/judge.md)',
    run: async () => (await import('./judge-model')).benchJudgeModel(),
  },
];

const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
const server = await startDevServer({
  cliPath: findTemporalCli({ log: console.error }),
  headless: true,
  readyTimeoutMs: 90_000,
});
console.log(`# agent-judge bench (Temporal dev server ${server.address}, in memory; ${new Date().toISOString()})`);
let failed = false;
try {
  for (const section of sections) {
    if (only && !only.includes(section.name)) continue;
    try {
      printTable(section.title, await section.run(server));
    } catch (err) {
      failed = true;
      console.error(`bench ${section.name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
  }
} finally {
  await server.stop();
}
process.exit(failed ? 1 : 0);
