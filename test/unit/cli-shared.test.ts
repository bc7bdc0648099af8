/** The shared CLI plumbing: one `--since`, one duration parser, one log-format choice. */
import { describe, expect, it } from 'vitest';
import { chooseLogFormat, parseDuration, parseSince, sinceWindowMs } from '../../src/cli/shared';

describe('--since and durations', () => {
  it('reads a duration ago or an ISO time', () => {
    expect(parseSince('24h', 100_000_000)).toBe(100_000_000 - 86_400_000);
    expect(parseSince('90s', 100_000)).toBe(10_000);
    expect(parseSince('2026-01-01T00:00:00Z')).toBe(Date.parse('2026-01-01T00:00:00Z'));
    expect(sinceWindowMs('7d', 1e12)).toBe(7 * 86_400_000);
    expect(sinceWindowMs(undefined)).toBeUndefined();
    expect(parseDuration('30m', '--x')).toBe(1_800_000);
  });

  it('refuses anything else with the flag named', () => {
    expect(() => parseSince('nonsense')).toThrow(
      '--since: expected a duration such as 30m, 24h or 7d, or an ISO time, got "nonsense"',
    );
    expect(() => parseSince('1y')).toThrow(/--since/);
    expect(() => parseDuration('12', '--every')).toThrow(
      '--every: expected a duration such as 30m, 24h or 7d, got "12"',
    );
  });
});

describe('log format', () => {
  it('is readable on a terminal and JSON otherwise', () => {
    expect(chooseLogFormat({ isTTY: true })).toBe('pretty');
    expect(chooseLogFormat({ isTTY: false })).toBe('json');
    expect(chooseLogFormat({})).toBe('json');
  });

  it('is JSON on a terminal when asked, by the flag or LOG_FORMAT; the flag wins', () => {
    expect(chooseLogFormat({ isTTY: true, env: { LOG_FORMAT: 'json' } })).toBe('json');
    expect(chooseLogFormat({ isTTY: true, flag: 'json' })).toBe('json');
    expect(chooseLogFormat({ isTTY: false, env: { LOG_FORMAT: 'pretty' } })).toBe('pretty');
    expect(chooseLogFormat({ isTTY: true, flag: 'json', env: { LOG_FORMAT: 'pretty' } })).toBe('json');
    expect(() => chooseLogFormat({ flag: 'xml' })).toThrow(/--log-format: expected pretty or json/);
  });
});
