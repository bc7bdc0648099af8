/**
 * Replays the recorded proposal histories (scripts/record-histories.ts) against the current workflow code. A failure
 * here means a change altered a workflow's command sequence: before 1.0 there is no history compatibility
 * (VERSIONING.md), so record the set again with the change, after checking that the new sequence is the intended one.
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
  it('has one recording of each main path, and nothing else', () => {
    expect([...files].sort()).toEqual([
      'caller-leased-reported.json',
      'clarified-approved.json',
      'exec-executed.json',
      'human-approved-executed.json',
      'human-timeout-with-reminder.json',
      'lightweight-approved-redeemed.json',
      'lightweight-rejected.json',
      'no-judge-executed.json',
    ]);
  });

  it.each(files)('%s replays deterministically', async (file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(join(DIR, file), 'utf8')));
    const workflowId = workflowIdOf(history);
    // Every recording names its run: the workflow binds capability tokens to its id.
    expect(workflowId).toMatch(/^proposal-[0-9a-f]{32}$/);
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: await workflowBundle(), replayName: `fixture-${file}` },
        history,
        workflowId,
      ),
    ).resolves.toBeUndefined();
  });
});
