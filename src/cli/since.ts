/**
 * `--since` and duration flags, without zod or the SDK: `list` reads them on its fast path (src/cli/list.ts), and
 * every other command through src/cli/shared.ts, which re-exports them.
 */
import { durationMs } from '../contracts/duration';
import { BadInputError } from '../contracts/errors';

/** The form the policy schema's `DurationSchema` accepts for a string. */
const DURATION_TEXT = /^\d+(\.\d+)?\s*(ms|s|m|h|d)$/;

/** A duration such as `30s`, `30m`, `24h` or `7d` in milliseconds; anything else is bad input naming `flag`. */
export function parseDuration(value: string, flag: string): number {
  const text = value.trim();
  if (!DURATION_TEXT.test(text)) {
    throw new BadInputError(`${flag}: expected a duration such as 30m, 24h or 7d, got ${JSON.stringify(value)}`);
  }
  return durationMs(text);
}

/**
 * `--since`: a duration ago (`24h`) or an ISO 8601 time, as epoch milliseconds. Every command
 * reads `--since` through this one function, so `list`, `audit` and `circles events` agree.
 */
export function parseSince(value: string, now = Date.now(), flag = '--since'): number {
  if (/^\d{4}-\d{2}-\d{2}/.test(value.trim())) {
    const t = Date.parse(value);
    if (!Number.isNaN(t)) return t;
  }
  try {
    return now - parseDuration(value, flag);
  } catch {
    throw new BadInputError(
      `${flag}: expected a duration such as 30m, 24h or 7d, or an ISO time, got ${JSON.stringify(value)}`,
    );
  }
}

/** `--since` as a window ending now (milliseconds), which is what the listing functions take. */
export function sinceWindowMs(value: string | undefined, now = Date.now()): number | undefined {
  return value === undefined ? undefined : Math.max(0, now - parseSince(value, now));
}
