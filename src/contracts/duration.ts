/**
 * Durations as policies spell them, without zod: workflow code converts them on every run, and the SDK evaluates a
 * workflow's modules afresh for each run, so this module must not drag the policy schemas in (docs/performance.md).
 */

/** A duration such as `90s`, `5m`, `1h`, `7d`, or a number of milliseconds (the policy schema checks the form). */
export type Duration = number | string;

/** Milliseconds in a {@link Duration}; pure, so workflow code can use it. */
export function durationMs(d: Duration): number {
  if (typeof d === 'number') return d;
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/.exec(d);
  if (!m) throw new Error(`not a duration: ${d}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'ms' | 's' | 'm' | 'h' | 'd'];
  return Math.round(Number(m[1]) * unit);
}
