/**
 * History archive figures (issue 11): how fast the archive Schedule's workflow copies closed proposal histories into
 * the archive folder (one file and one hash-chained index entry each), what a run costs when everything is already
 * archived, and how long `audit verify` takes over the result.
 *
 * Standalone: `node --import tsx bench/archive.ts` starts its own dev server. BENCH_ARCHIVE_N proposals (default
 * 1,000), all `memory_write` (executed), submitted 20 at a time.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import pino from 'pino';
import { verifyArchive, readArchiveIndex } from '../src/audit/archive';
import { submitAndWait } from '../src/client/proposals';
import { archiveScheduleId, PROPOSAL_WORKFLOW_TYPE, taskQueuesFor, type TaskQueues } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { WORKFLOWS_PATH } from '../src/workflow-code';
import { ensureArchiveSchedule } from '../src/worker/archive-schedule';
import type { HistoryArchiveProgress } from '../src/workflows/history-archive';
import { pool, runAlone, timed, type BenchServer, type Row } from './lib';

const N = Number(process.env.BENCH_ARCHIVE_N ?? 1000);
const silentBundler = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** Triggers the archive Schedule and waits for the run it starts. */
async function triggerAndWait(client: Client, taskQueues: TaskQueues): Promise<HistoryArchiveProgress> {
  const handle = client.schedule.getHandle(archiveScheduleId(taskQueues));
  const before = (await handle.describe()).info.recentActions.length;
  await handle.trigger();
  for (;;) {
    const actions = (await handle.describe()).info.recentActions;
    if (actions.length > before) {
      const wf = actions.at(-1)!.action.workflow;
      return (await client.workflow
        .getHandle(wf.workflowId, wf.firstExecutionRunId)
        .result()) as HistoryArchiveProgress;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function benchArchive(server: BenchServer): Promise<Row[]> {
  const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-archive-'));
  const taskQueues = taskQueuesFor(`bench-archive-${randomUUID()}`);
  const policy = defaultPolicyWith({}, { baseDir, env: {} });
  const dir = policy.spec.audit.archive.dir;
  const system = await startWorkersInProcess(server.address, {
    namespace: server.namespace,
    taskQueues,
    policy,
    logger: pino({ level: 'silent' }),
    baseDir,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: silentBundler }),
  });
  try {
    const ids = Array.from({ length: N }, () => randomUUID());
    await pool(ids, 20, async (id) => {
      await submitAndWait(
        system.client,
        {
          proposal_id: id,
          agent_id: '@bench',
          action_type: 'memory_write',
          justification: `bench: archive ${id}`,
          cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/11' }],
          target: { store: 'bench' },
          parameters: { content: `bench ${id}` },
        },
        { taskQueue: taskQueues.workflow },
      );
    });
    const query =
      `WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}' AND ExecutionStatus != 'Running'` +
      ` AND TaskQueue = '${taskQueues.workflow}'`;
    while ((await system.client.workflow.count(query)).count < N) await new Promise((r) => setTimeout(r, 200));
    await ensureArchiveSchedule(system.client, { taskQueues, policy });

    const [firstMs, first] = await timed(() => triggerAndWait(system.client, taskQueues));
    const [againMs, again] = await timed(() => triggerAndWait(system.client, taskQueues));
    const [verifyMs, verdict] = await timed(() => Promise.resolve(verifyArchive(dir)));
    const entries = readArchiveIndex(dir);
    const bytes = entries.reduce((sum, e) => sum + e.record.bytes, 0);
    const events = entries.reduce((sum, e) => sum + e.record.events, 0);
    if (first.archived !== N || again.archived !== 0 || !verdict.ok || verdict.entries !== N) {
      throw new Error(`archive bench: unexpected result ${JSON.stringify({ first, again, verdict })}`);
    }
    await system.client.schedule.getHandle(archiveScheduleId(taskQueues)).delete();
    const perSecond = (ms: number) => `${Math.round((N / ms) * 1000)} histories/s`;
    return [
      {
        name: `archive run: ${N} closed proposals, none archived (trigger -> result)`,
        n: N,
        p50: firstMs,
        note:
          `${perSecond(firstMs)}; ${first.batches} batches; ` +
          `${Math.round(bytes / N)} B and ${Math.round(events / N)} events per history`,
      },
      {
        name: `archive run: ${N} closed proposals, all archived already`,
        n: N,
        p50: againMs,
        note: 'lists them and finds nothing to copy',
      },
      { name: `audit verify: chain + ${N} file hashes`, n: N, p50: verifyMs, note: perSecond(verifyMs) },
    ];
  } finally {
    await system.stop();
    rmSync(baseDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await runAlone('History archive (issue 11)', benchArchive);
}
