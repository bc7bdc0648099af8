/**
 * What provenance costs (issue 40): the time it adds to one call's decision in the gate (recording the user's task,
 * then matching the call's arguments against the session's untrusted values), and the memory one session holds.
 * Interleaved rounds, percentiles; no Temporal (the gate's provenance is in-process and runs before any proposal).
 * Run: `node --import tsx --expose-gc bench/provenance.ts`.
 */
import { ProvenanceSettingsSchema } from '../src/contracts/provenance';
import { GateProvenance } from '../src/gate/provenance';
import type { GateToolCall } from '../src/gate/types';
import { percentile } from './lib';

const settings = ProvenanceSettingsSchema.parse(undefined);
const ROUNDS = 30;
const PER_ROUND = 200;

/** A fetched page of about `kb` KiB: prose with addresses, hosts and ids in it, as real pages have. */
function page(i: number, kb: number): string {
  const parts: string[] = [];
  for (let n = 0; parts.join(' ').length < kb * 1024; n += 1) {
    parts.push(
      `Section ${n} of the guide explains how the service works and where to read more about it.`,
      `Contact support${i}_${n}@example${n}.com or see https://docs${n}.example.org/p/${i}/${n} and /srv/data/${i}/${n}.`,
    );
  }
  return parts.join(' ');
}

const call = (session: string, i: number): GateToolCall => ({
  runtime: 'claude-code',
  server: 'builtin',
  tool: 'WebFetch',
  arguments: { url: `https://example.net/search?q=${i}`, prompt: 'summarise the page for the user' },
  userTask: 'Find the release notes of the project and tell me what changed in version 2.',
  session: { sessionId: session },
});

function timeCalls(p: GateProvenance | null, session: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < PER_ROUND; i += 1) {
    const c = call(session, i);
    const t = process.hrtime.bigint();
    if (p) p.provenanceOf('@bench', c, 'web_request');
    out.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  return out;
}

const gc = (globalThis as { gc?: () => void }).gc;
const heap = () => {
  gc?.();
  return process.memoryUsage().heapUsed;
};

const p = new GateProvenance(settings);
// A session that read 20 pages of 8 KiB each (about 900 values).
for (let i = 0; i < 20; i += 1) {
  p.recordResult(
    { agentId: '@bench', runtime: 'claude-code', server: 'builtin', tool: 'WebFetch', sessionId: 's' },
    page(i, 8),
  );
}
const withP: number[] = [];
const without: number[] = [];
for (let r = 0; r < ROUNDS; r += 1) {
  without.push(...timeCalls(null, 's'));
  withP.push(...timeCalls(p, 's'));
}
const stat = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `p50 ${percentile(s, 50).toFixed(1)} µs, p95 ${percentile(s, 95).toFixed(1)} µs`;
};
const size = p.sessions.find('@bench|claude-code|s')!.size;
console.log(
  `per call, session with ${size.untrusted} untrusted values: ${stat(withP)} (baseline loop ${stat(without)})`,
);

// Recording one 8 KiB result.
const rec: number[] = [];
for (let i = 0; i < 200; i += 1) {
  const text = page(1000 + i, 8);
  const t = process.hrtime.bigint();
  p.recordResult(
    { agentId: '@bench', runtime: 'claude-code', server: 'builtin', tool: 'WebFetch', sessionId: 'r' },
    text,
  );
  rec.push(Number(process.hrtime.bigint() - t) / 1000);
}
console.log(`recording one 8 KiB result: ${stat(rec)}`);

// Memory per session: 1,000 sessions that each read 20 pages of 8 KiB; and 100 sessions filled to the bound.
for (const [sessions, pages] of [
  [1000, 20],
  [100, 200],
] as const) {
  const q = new GateProvenance(settings);
  const before = heap();
  for (let s = 0; s < sessions; s += 1) {
    for (let i = 0; i < pages; i += 1) {
      q.recordResult(
        { agentId: '@bench', runtime: 'claude-code', server: 'builtin', tool: 'WebFetch', sessionId: `m${s}` },
        page(s * 1000 + i, 8),
      );
    }
  }
  const after = heap();
  const values = q.sessions.find('@bench|claude-code|m0')!.size.untrusted;
  console.log(
    `memory: ${sessions} sessions of ${values} untrusted values each: ` +
      `${((after - before) / sessions / 1024).toFixed(0)} KiB per session${gc ? '' : ' (run with --expose-gc)'}`,
  );
}
