/**
 * A review lives for weeks and every mark is an Update in its history: it continues as new before the history grows
 * too long, and nothing is lost on the way (issue 11, reviews are durable). A dev server of its own suggests
 * continue-as-new after 30 events (`limit.historyCount.suggestContinueAsNew`), so a few marks cross several runs;
 * the review keeps its id, seed, marks and refusals across them, and closes with every mark counted.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowFailedError } from '@temporalio/client';
import { closeReview, markReview, openReview, reviewStatus } from '../../src/client/reviews';
import {
  isoWeekOf,
  periodRange,
  REVIEW_WORKFLOW_TYPE,
  reviewWorkflowId,
  type ReviewCandidate,
} from '../../src/contracts/review';
import {
  DEV_SERVER_DYNAMIC_CONFIG,
  ensureSearchAttributes,
  startDevServer,
  type DevServer,
} from '../../src/devserver/server';
import { findTemporalCli } from '../../src/devserver/temporal-cli';
import { silentLogger } from '../helpers/logger';
import { generateIdentity } from '../../src/identity/keys';
import { startSystem, type TestSystem } from '../helpers/system';

const scott = generateIdentity();
const week = isoWeekOf(Date.now());
const reviewId = reviewWorkflowId('weekly', week);
const start = periodRange('weekly', week).start;
/** Twelve REJECTs of this week (the review only reads what it is given: no proposals need to run). */
const candidates: ReviewCandidate[] = Array.from({ length: 12 }, (_, i) => ({
  workflow_id: `proposal-can-${i}-${randomUUID().slice(0, 8)}`,
  proposal_id: `can-${i}`,
  verdict: 'REJECT',
  decided_by: 'rules',
  escalated: false,
  tier: 'full-judge-review',
  action_type: 'exec',
  started_at: new Date(start + 60_000 * (i + 1)).toISOString(),
}));

let dir: string;
let server: DevServer;
let sys: TestSystem;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agent-judge-review-can-'));
  server = await startDevServer({
    cliPath: findTemporalCli({ logger: silentLogger }),
    headless: true,
    readyTimeoutMs: 90_000,
    logFile: join(dir, 'server.log'),
    dynamicConfig: { ...DEV_SERVER_DYNAMIC_CONFIG, 'limit.historyCount.suggestContinueAsNew': 30 },
  });
  const connection = await Connection.connect({ address: server.address });
  await ensureSearchAttributes(connection, server.namespace);
  await connection.close();
  sys = await startSystem({
    temporal: { address: server.address, namespace: server.namespace },
    spec: { escalation: { approvers: ['scott', 'alice'], approverKeys: { scott: scott.public_key } } },
  });
});

afterAll(async () => {
  await sys?.stop();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The review's runs, oldest first, and how each ended. */
async function runsOfReview(): Promise<Array<{ runId: string; status: string }>> {
  const runs: Array<{ runId: string; status: string; start: number }> = [];
  for await (const wf of sys.client.workflow.list({ query: `WorkflowId = '${reviewId}'` }))
    runs.push({ runId: wf.runId, status: wf.status.name, start: wf.startTime.getTime() });
  return runs.sort((a, b) => a.start - b.start).map(({ runId, status }) => ({ runId, status }));
}

describe('a review whose history grows long', () => {
  it('continues as new, keeping its seed, marks and refusals, and closes with every mark counted', async () => {
    const opened = await openReview(sys.client, 'weekly', week, candidates, { taskQueue: sys.taskQueues.workflow });
    expect(opened.in_review).toHaveLength(12);
    for (const [i, c] of candidates.entries()) {
      await markReview(
        sys.client,
        reviewId,
        { proposal: c.workflow_id, mark: i % 3 === 0 ? 'wrong' : 'correct', reviewer: 'alice' },
        {},
      );
    }
    // A signed mark after the runs changed: its nonce is refused when replayed, as in the first run.
    await markReview(
      sys.client,
      reviewId,
      { proposal: candidates[0]!.workflow_id, mark: 'correct', reviewer: 'scott' },
      {
        key: scott,
      },
    );
    const runs = await runsOfReview();
    expect(runs.length).toBeGreaterThan(1);
    expect(runs.slice(0, -1).every((r) => r.status === 'CONTINUED_AS_NEW')).toBe(true);
    expect(runs.at(-1)!.status).toBe('RUNNING');

    const status = await reviewStatus(sys.client, reviewId);
    expect(status.seed).toBe(opened.seed);
    expect(status.opened_at).toBe(opened.opened_at);
    expect(status.in_review).toEqual(opened.in_review);
    expect(status.marks).toHaveLength(13);
    // Refusals hold in a later run: someone not listed, a proposal not in the review.
    await expect(
      markReview(sys.client, reviewId, { proposal: candidates[1]!.workflow_id, mark: 'correct', reviewer: 'carol' }),
    ).rejects.toThrow('carol is not a reviewer');

    const closed = await closeReview(sys.client, reviewId, null);
    expect(closed.state).toBe('closed');
    // Latest mark per proposal: candidate 0 was re-marked correct, so 3 of 12 REJECTs stay wrong (3, 6, 9).
    expect(closed.tally).toMatchObject({ marked: 12, rejects_marked: 12, rejects_wrong: 3 });
    expect((await runsOfReview()).at(-1)!.status).toBe('COMPLETED');
  });

  it('refuses a start that carries state (only the review itself carries it into its next run)', async () => {
    const lastWeek = isoWeekOf(Date.now() - 7 * 86_400_000);
    const forged = {
      kind: 'weekly',
      period: lastWeek,
      candidates,
      carried: {
        seed: 'ab'.repeat(32),
        opened_at: new Date().toISOString(),
        refreshed_at: new Date().toISOString(),
        runs: 1,
        marks: [],
      },
    };
    const failure: unknown = await sys.client.workflow
      .execute<(input: unknown) => Promise<unknown>>(REVIEW_WORKFLOW_TYPE, {
        workflowId: reviewWorkflowId('weekly', lastWeek),
        taskQueue: sys.taskQueues.workflow,
        args: [forged],
      })
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).cause?.message).toMatch(/^carried: only a review continuing as new/);
  });
});
