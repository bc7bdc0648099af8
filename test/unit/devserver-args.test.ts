import { describe, expect, it } from 'vitest';
import { DEV_SERVER_DYNAMIC_CONFIG, devServerArgs } from '../../src/devserver/server';

const base = { ip: '127.0.0.1', port: 7233, namespace: 'default', headless: true, uiPort: null };

/** The value passed for one `--dynamic-config-value` key, or undefined when the key is not passed. */
function dynamicValue(args: string[], key: string): string | undefined {
  for (let i = 0; i < args.length - 1; i++) {
    if (args[i] === '--dynamic-config-value' && args[i + 1]!.startsWith(`${key}=`)) {
      return args[i + 1]!.slice(key.length + 1);
    }
  }
  return undefined;
}

describe('devServerArgs', () => {
  it('starts the dev server with its transfer queue read as fast as work arrives (not 20 times a second)', () => {
    const args = devServerArgs(base);
    expect(dynamicValue(args, 'history.transferProcessorMaxPollRPS')).toBe('10000');
    expect(args.slice(0, 2)).toEqual(['server', 'start-dev']);
  });

  it('passes every default setting as KEY=JSON', () => {
    const args = devServerArgs(base);
    for (const [key, value] of Object.entries(DEV_SERVER_DYNAMIC_CONFIG)) {
      expect(dynamicValue(args, key)).toBe(JSON.stringify(value));
    }
  });

  it('leaves task-queue fairness off by default, and turns it on when asked (issue 38)', () => {
    const off = devServerArgs(base);
    expect(dynamicValue(off, 'matching.enableFairness')).toBeUndefined();
    expect(dynamicValue(off, 'matching.useNewMatcher')).toBeUndefined();
    const on = devServerArgs({ ...base, fairness: true });
    expect(dynamicValue(on, 'matching.enableFairness')).toBe('true');
    expect(dynamicValue(on, 'matching.useNewMatcher')).toBe('true');
    expect(dynamicValue(on, 'history.transferProcessorMaxPollRPS')).toBe('10000');
  });

  it('an explicit empty dynamic config gives the stock server (benchmarks compare the two)', () => {
    expect(devServerArgs({ ...base, dynamicConfig: {} })).not.toContain('--dynamic-config-value');
  });

  it('keeps state in the db file with WAL, a UI port unless headless, and our search attributes', () => {
    const args = devServerArgs({ ...base, headless: false, uiPort: 8233, dbFile: '/tmp/x.db' });
    expect(args.join(' ')).toContain('--db-filename /tmp/x.db --sqlite-pragma journal_mode=WAL');
    expect(args.join(' ')).toContain('--ui-port 8233');
    expect(args).not.toContain('--headless');
    expect(args.join(' ')).toContain('--search-attribute Tier=Keyword');
  });
});
