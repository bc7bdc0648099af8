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
import type { temporal } from '@temporalio/proto';
import { proposalWorkflowId } from '../../src/contracts/digest';
import { safeParseProposal } from '../../src/contracts/proposal';
import { workflowBundle } from '../helpers/system';

const DIR = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));

/**
 * The workflow id a recording ran under: the fingerprint of the proposal it started with. A replay must use it, as a
 * worker and `agent-judge audit replay` do: the workflow binds capability tokens to its id (a replay under the SDK's
 * stand-in id "fake" would not take the token its policy snapshot recorded).
 */
function workflowIdOf(history: temporal.api.history.v1.IHistory): string | undefined {
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload?.data) return undefined;
  const input = JSON.parse(new TextDecoder().decode(payload.data)) as { proposal?: unknown };
  const parsed = safeParseProposal(input.proposal);
  return parsed.ok ? proposalWorkflowId(parsed.value) : undefined;
}

describe('recorded histories replay against the current workflow code', () => {
  it('has recordings of the main paths', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'no-judge-executed.json',
        'clarified-approved.json',
        'human-approved-executed.json',
        'human-timeout-with-reminder.json',
        // Two local activities (the token signed after the verdict), then one (signed in the policy snapshot).
        'lightweight-approved-redeemed-v3.json',
        'lightweight-approved-redeemed-v4.json',
        'no-judge-executed-v4.json',
        // The executor redeems by its own Update (v4), then as the workflow schedules it (v5).
        'no-judge-executed-v5.json',
      ]),
    );
  });

  it.each(files)('%s replays deterministically', async (file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(join(DIR, file), 'utf8')));
    const workflowId = workflowIdOf(history);
    // Recordings since capability tokens (v3 on) must name their run.
    if (/-v[3-9]\.json$/.test(file)) expect(workflowId).toMatch(/^proposal-[0-9a-f]{32}$/);
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: await workflowBundle(), replayName: `fixture-${file}` },
        history,
        workflowId,
      ),
    ).resolves.toBeUndefined();
  });
});
