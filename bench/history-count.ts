/**
 * What one proposal writes, per tier, read from real histories on the bench's dev server (issue 43): workflow tasks,
 * activities, local activities, Updates, search-attribute upserts, history events, and the visibility writes they
 * make (one per start, per upsert and per close), for the proposal's run and its proposal_id reservation together.
 * Counted at the moment the submitter has its answer (what the decision cost) and again once every run it started has
 * closed (what the proposal costs in all: a caller-performed approval stays open until its token is redeemed).
 *
 * `node --import tsx bench/history-count.ts`, or the `history` section of `npm run bench`.
 */
import type { Client } from '@temporalio/client';
import { PROPOSAL_ID_RESERVATION_PREFIX } from '../src/names';
import { submitAndWait } from '../src/client/proposals';
import { closedOutcome } from './capabilities';
import { benchProposal, startEngineRig, type EngineKind } from './engine';
import type { BenchServer } from './lib';

type Kind = EngineKind | 'lightweight-named';
const KINDS: readonly Kind[] = [
  'empty',
  'empty+activity',
  'lightweight',
  'lightweight-named',
  'no-judge',
  'full-judge',
];

/** The counts of one or more runs' histories. */
export interface HistoryShape {
  events: number;
  workflowTasks: number;
  activities: number;
  localActivities: number;
  updates: number;
  /** Ours and the SDK's (each `patched()` upserts `TemporalChangeVersion` once). */
  upserts: number;
  /** Visibility records written: one per start, per upsert, per close. */
  visibilityWrites: number;
  /** Runs counted (the proposal's, and its reservation's when it has a chosen proposal_id). */
  runs: number;
}

const ZERO: HistoryShape = {
  events: 0,
  workflowTasks: 0,
  activities: 0,
  localActivities: 0,
  updates: 0,
  upserts: 0,
  visibilityWrites: 0,
  runs: 0,
};

/** The shape of one run's history as it stands now (missing runs count nothing). */
export async function historyShape(client: Client, workflowId: string): Promise<HistoryShape> {
  let events;
  try {
    events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  } catch {
    return ZERO;
  }
  const has = (attr: string) => events.filter((e) => (e as Record<string, unknown>)[attr] != null).length;
  const upserts = has('upsertWorkflowSearchAttributesEventAttributes');
  const closes =
    has('workflowExecutionCompletedEventAttributes') +
    has('workflowExecutionFailedEventAttributes') +
    has('workflowExecutionTimedOutEventAttributes') +
    has('workflowExecutionTerminatedEventAttributes');
  return {
    events: events.length,
    workflowTasks: has('workflowTaskScheduledEventAttributes'),
    activities: has('activityTaskScheduledEventAttributes'),
    localActivities: events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length,
    updates: has('workflowExecutionUpdateAcceptedEventAttributes'),
    upserts,
    visibilityWrites: 1 + upserts + closes,
    runs: 1,
  };
}

function sum(a: HistoryShape, b: HistoryShape): HistoryShape {
  const out = { ...a };
  for (const key of Object.keys(ZERO) as (keyof HistoryShape)[]) out[key] = a[key] + b[key];
  return out;
}

/** Counts per kind: at the answer, and once closed. Rows: [kind, when, ...counts]. */
export async function benchHistoryCounts(server: BenchServer): Promise<string[][]> {
  const rig = await startEngineRig({ address: server.address, namespace: server.namespace });
  const rows: string[][] = [];
  try {
    for (const kind of KINDS) {
      let ids: string[];
      if (kind === 'empty' || kind === 'empty+activity') {
        ids = [await rig.run(kind)];
      } else {
        const input = benchProposal(kind === 'lightweight-named' ? 'lightweight' : kind);
        if (kind === 'lightweight-named') delete input.proposal_id;
        const out = await submitAndWait(rig.client, input, { taskQueue: rig.taskQueue });
        ids = [out.workflow_id];
        if (typeof input.proposal_id === 'string') ids.push(`${PROPOSAL_ID_RESERVATION_PREFIX}${input.proposal_id}`);
      }
      const count = async () => (await Promise.all(ids.map((id) => historyShape(rig.client, id)))).reduce(sum, ZERO);
      rows.push(cells(kind, 'at the answer', await count()));
      // The caller performs a lightweight approval: redeeming its token lets the run close.
      if (kind !== 'empty' && kind !== 'empty+activity') await closedOutcome(rig.client, ids[0] as string);
      rows.push(cells(kind, 'closed', await countWhenClosed(rig.client, ids, count)));
    }
  } finally {
    await rig.stop();
  }
  return rows;
}

/** Waits (up to 10 s) until every run in `ids` has closed, then counts. */
async function countWhenClosed(client: Client, ids: string[], count: () => Promise<HistoryShape>) {
  for (let i = 0; i < 100; i++) {
    const open = await Promise.all(
      ids.map((id) =>
        client.workflow
          .getHandle(id)
          .describe()
          .then(
            (d) => d.status.name === 'RUNNING',
            () => false,
          ),
      ),
    );
    if (!open.includes(true)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return count();
}

function cells(kind: string, when: string, s: HistoryShape): string[] {
  return [
    kind,
    when,
    String(s.runs),
    String(s.workflowTasks),
    String(s.activities),
    String(s.localActivities),
    String(s.updates),
    String(s.upserts),
    String(s.visibilityWrites),
    String(s.events),
  ];
}

export const HISTORY_COLUMNS = [
  'kind',
  'when',
  'runs',
  'workflow tasks',
  'activities',
  'local activities',
  'Updates',
  'upserts',
  'visibility writes',
  'events',
];

if (process.argv[1]?.endsWith('history-count.ts')) {
  const { printColumns } = await import('./lib');
  const { DefaultLogger, Runtime } = await import('@temporalio/worker');
  const { startDevServer } = await import('../src/devserver/server');
  const { findTemporalCli } = await import('../src/devserver/temporal-cli');
  const { createLogger } = await import('../src/cli/shared');
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const server = await startDevServer({
    cliPath: findTemporalCli({ logger: createLogger() }),
    headless: true,
    readyTimeoutMs: 90_000,
  });
  try {
    const rows = await benchHistoryCounts({ address: server.address, namespace: server.namespace });
    printColumns('History per proposal (one of each kind)', HISTORY_COLUMNS, rows);
  } finally {
    await server.stop();
  }
}
