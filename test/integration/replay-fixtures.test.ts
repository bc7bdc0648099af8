/**
 * Replays recorded proposal histories (scripts/record-histories.ts) against the current workflow
 * code. A failure here means a change would break proposals already running in production: use
 * `patched()` for the new behaviour, or re-record only when no old runs can exist.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowBundle } from '../helpers/system';

const DIR = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));

describe('recorded histories replay against the current workflow code', () => {
  it('has recordings of the main paths', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'no-judge-executed.json',
        'clarified-approved.json',
        'human-approved-executed.json',
        'human-timeout-with-reminder.json',
      ]),
    );
  });

  it.each(files)('%s replays deterministically', async (file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(join(DIR, file), 'utf8')));
    await expect(
      Worker.runReplayHistory({ workflowBundle: await workflowBundle(), replayName: `fixture-${file}` }, history),
    ).resolves.toBeUndefined();
  });
});
