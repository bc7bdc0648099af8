/**
 * Where one proposal's wall time goes (issue 12): `node --import tsx bench/trace-proposal.ts` submits BENCH_N
 * proposals of BENCH_KIND (lightweight, no-judge, full-judge; default lightweight) named by their content, one at a
 * time, and splits each from its history's timestamps:
 * start → first workflow task scheduled, scheduled → started (the server's dispatch), started → completed (the
 * worker's task: activations and local activities), and the client's remainder (Update-with-Start round trip), then
 * the SDK core's latency histograms as means (scraped from its Prometheus endpoint on 127.0.0.1:19465).
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { submitAndWait } from '../src/client/proposals';
import { benchProposal } from './engine';
import { percentile } from './lib';
import { startBenchSystem } from './profile-proposals';

const n = Number(process.env.BENCH_N ?? 100);
const kind = (process.env.BENCH_KIND ?? 'lightweight') as 'lightweight' | 'no-judge' | 'full-judge';
const METRICS = '127.0.0.1:19465';
Runtime.install({
  logger: new DefaultLogger('ERROR'),
  telemetryOptions: { metrics: { prometheus: { bindAddress: METRICS } } },
});
const { system, queues, stop } = await startBenchSystem('trace');
const rows = {
  total: [] as number[],
  toScheduled: [] as number[],
  dispatch: [] as number[],
  task: [] as number[],
  client: [] as number[],
};
const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
try {
  for (let i = 0; i < n + 10; i++) {
    const proposal = benchProposal(kind);
    delete proposal.proposal_id;
    const t0 = performance.now();
    const out = await submitAndWait(system.client, proposal, { taskQueue: queues.workflow });
    const total = performance.now() - t0;
    if (i < 10) continue; // warm-up
    const events = (await system.client.workflow.getHandle(out.workflow_id).fetchHistory()).events ?? [];
    const at = (type: string) => ms(events.find((e) => e[type as keyof typeof e] != null)?.eventTime);
    const started = at('workflowExecutionStartedEventAttributes');
    const scheduled = at('workflowTaskScheduledEventAttributes');
    const taskStarted = at('workflowTaskStartedEventAttributes');
    const completed = at('workflowTaskCompletedEventAttributes');
    rows.total.push(total);
    rows.toScheduled.push(scheduled - started);
    rows.dispatch.push(taskStarted - scheduled);
    rows.task.push(completed - taskStarted);
    rows.client.push(total - (completed - started));
  }
  for (const [name, values] of Object.entries(rows)) {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (p: number) => percentile(sorted, p).toFixed(1).padStart(6);
    console.log(`${name.padEnd(12)} p50 ${at(50)} ms   p95 ${at(95)} ms`);
  }
  // The SDK core's own histograms, as averages: the worker's whole task, its local activities, its requests.
  const text = await (await fetch(`http://${METRICS}/metrics`)).text();
  const sums = new Map<string, { sum: number; count: number }>();
  for (const m of text.matchAll(/^(temporal_[a-z_]+?)_(sum|count)(?:\{[^}]*\})? ([0-9.e+-]+)$/gm)) {
    const [, name, field, value] = m as unknown as [string, string, 'sum' | 'count', string];
    const row = sums.get(name) ?? { sum: 0, count: 0 };
    row[field] += Number(value);
    sums.set(name, row);
  }
  for (const [name, { sum, count }] of sums)
    if (count > 0) console.log(`${name.padEnd(58)} mean ${(sum / count).toFixed(1).padStart(6)} ms over ${count}`);
} finally {
  await stop();
}
