/**
 * This test process's Runtime with the SDK's Prometheus exporter on a free loopback port. Import it
 * FIRST in a test file: the Runtime is one per process and test/helpers/system.ts installs a plain
 * one otherwise. Also a small parser for the text format, to compare scrapes.
 */
import { Runtime } from '@temporalio/worker';
import { testRuntimeLogger } from './runtime-logger';
import { freePort } from '../../src/devserver/server';
import { telemetryOptions } from '../../src/metrics/telemetry';

export const metricsPort = await freePort();
export const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
Runtime.install({
  logger: testRuntimeLogger(),
  telemetryOptions: telemetryOptions({ prometheus: `127.0.0.1:${metricsPort}` }),
});

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) throw new Error(`unparsable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

export async function scrape(url = metricsUrl): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  const text = await res.text();
  return { text, samples: parseExposition(text) };
}

/** A sample's identity: name and labels other than the SDK's own (namespace, taskQueue, ...). */
export function seriesKey(
  s: Sample,
  drop: readonly string[] = ['namespace', 'taskQueue', 'workflowType', 'activityType', 'service_name'],
): string {
  const labels = Object.entries(s.labels)
    .filter(([k]) => !drop.includes(k))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`);
  return `${s.name}{${labels.join(',')}}`;
}

/**
 * What changed between two scrapes among our series (`agent_judge_*`) on one task queue: each
 * series key with its increase. Histogram buckets are left out (their `_count` says enough).
 */
export function increases(before: Sample[], after: Sample[], taskQueues: readonly string[]): Record<string, number> {
  const pick = (ss: Sample[]) =>
    new Map(
      ss
        .filter((s) => s.name.startsWith('agent_judge_') && !s.name.endsWith('_bucket') && !s.name.endsWith('_sum'))
        .filter((s) => taskQueues.includes(s.labels.taskQueue ?? ''))
        .filter((s) => !s.name.startsWith('agent_judge_proposals_open') && !s.name.includes('oldest_age'))
        .map((s) => [seriesKey(s), s.value]),
    );
  const a = pick(before);
  const b = pick(after);
  const diff: Record<string, number> = {};
  for (const [k, v] of b) {
    const d = v - (a.get(k) ?? 0);
    if (d !== 0) diff[k] = d;
  }
  return diff;
}
