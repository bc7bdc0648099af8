/**
 * Issue 11, "Keep every decision", against the real dev server: the archive Schedule, the archive workflow and its
 * activity (crash between a file and its index entry included), export and replay of a proposal the server no longer
 * has, and `audit verify` finding a tampered file and a tampered index line.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { exportAudit, replayProposals, type AuditRecord } from '../../src/audit';
import { archiveIndexPath, readArchiveIndex, verifyArchive, type ArchiveRecord } from '../../src/audit/archive';
import { decide, listProposals, submitAndWait } from '../../src/client/proposals';
import { archiveScheduleId, archiveTaskQueue, HISTORY_ARCHIVE_WORKFLOW_TYPE } from '../../src/names';
import { ensureArchiveSchedule } from '../../src/worker/archive-schedule';
import { performApproved, proposal, startSystem, testPolicy, workflowBundle, type TestSystem } from '../helpers/system';
import { recordedProposals } from '../../src/replay/history';
import { replay } from '../../src/replay/run';
import { deleteRunAndWait, triggerArchiveAndWait } from '../helpers/archive-runs';

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));
const run = promisify(execFile);

let sys: TestSystem;
let dir: string;
const ids: string[] = [];
const runs = new Map<string, { workflowId: string; runId: string }>();
/** Set by a test: the archive activity throws once, after a file is complete and before its index entry. */
let crashOnce: ((record: ArchiveRecord) => void) | undefined;
const crashed: ArchiveRecord[] = [];

beforeAll(async () => {
  const base = mkdtempSync(join(tmpdir(), 'agent-judge-archive-'));
  dir = join(base, 'archive');
  sys = await startSystem({
    spec: { escalation: { timeout: '1m', approvers: ['scott'], reminderAt: 0 } },
    archive: {
      dir,
      afterFileWritten: (record) => {
        const crash = crashOnce;
        crashOnce = undefined;
        if (crash) {
          crashed.push(record);
          crash(record);
        }
      },
    },
  });
  const submit = async (p: Record<string, unknown>) => {
    ids.push(String(p.proposal_id));
    return submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
  };
  await submit(proposal('memory_write'));
  await submit(proposal('exec', { parameters: { command: ['rm', 'x'] } }));
  const h = proposal('financial_op');
  await submit(h);
  const approved = await decide(sys.client, String(h.proposal_id), {
    decision: 'approve',
    approver: 'scott',
    reason: 'budgeted',
  });
  // The caller performs a financial op itself: it redeems the approval's token, and the run closes.
  await performApproved(sys, approved);
  // Visibility is eventually consistent: wait until all three show as closed.
  for (let i = 0; i < 80; i++) {
    const listed = await listProposals(sys.client, { sinceMs: 3_600_000 });
    const closed = listed.filter((r) => ids.includes(r.proposal_id) && r.closed_at !== null);
    if (closed.length === ids.length) {
      for (const r of closed) {
        const d = await sys.client.workflow.getHandle(r.workflow_id).describe();
        runs.set(r.proposal_id, { workflowId: r.workflow_id, runId: d.runId });
      }
      break;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  expect(runs.size).toBe(3);
});
afterAll(async () => {
  await sys?.client.schedule
    .getHandle(archiveScheduleId(sys.taskQueues))
    .delete()
    .catch(() => {});
  await sys?.stop();
  rmSync(join(dir, '..'), { recursive: true, force: true });
});

function indexedRunIds(): string[] {
  return readArchiveIndex(dir).map((e) => e.record.run_id);
}

describe('the archive Schedule', () => {
  it('is created once, with the policy interval and overlap skip, and starts the archive workflow', async () => {
    const first = await ensureArchiveSchedule(sys.client, { taskQueues: sys.taskQueues, policy: sys.policy });
    const again = await ensureArchiveSchedule(sys.client, { taskQueues: sys.taskQueues, policy: sys.policy });
    expect(first).toEqual({ scheduleId: archiveScheduleId(sys.taskQueues), created: true });
    expect(again).toEqual({ scheduleId: archiveScheduleId(sys.taskQueues), created: false });
    const described = await sys.client.schedule.getHandle(first.scheduleId).describe();
    expect(described.spec.intervals?.map((i) => i.every)).toEqual([3_600_000]);
    expect(described.policies.overlap).toBe('SKIP');
    expect(described.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: HISTORY_ARCHIVE_WORKFLOW_TYPE,
      taskQueue: sys.taskQueues.workflow,
      args: [{ archiveTaskQueue: archiveTaskQueue(sys.taskQueues) }],
    });
  });
});

describe('archiving', () => {
  it('survives a crash between a file and its index entry: nothing lost, nothing twice', async () => {
    crashOnce = () => {
      throw new Error('crash between the file and the index');
    };
    const result = await triggerArchiveAndWait(sys);
    expect(crashed).toHaveLength(1);
    expect(result).toMatchObject({ archived: 3, rechecked: 1, missing: 0, indexed: 3 });
    // Progress a person sees in the Web UI: the run's memo.
    expect(result.memo).toEqual({ archived: 3, indexed: 3 });
    const indexed = indexedRunIds();
    expect(indexed.sort()).toEqual([...runs.values()].map((r) => r.runId).sort());
    // The run whose file was written before the crash is indexed once, and its file is the server's history.
    expect(indexed.filter((id) => id === crashed[0]!.run_id)).toHaveLength(1);
    expect(verifyArchive(dir)).toMatchObject({ ok: true, entries: 3, unindexed: [] });
  });

  it('archives nothing twice when triggered again', async () => {
    const result = await triggerArchiveAndWait(sys);
    expect(result).toMatchObject({ archived: 0, rechecked: 0, indexed: 3 });
    expect(indexedRunIds()).toHaveLength(3);
    expect(result.memo).toEqual({ archived: 0, indexed: 3 });
  });
});

describe('a proposal whose history exists only in the archive', () => {
  let deleted: { workflowId: string; runId: string };
  beforeAll(async () => {
    deleted = runs.get(ids[2]!)!;
    await deleteRunAndWait(sys, deleted);
  });

  it('is still exported, with its verdict and decision, and no run is counted twice', async () => {
    const records: AuditRecord[] = [];
    for await (const r of exportAudit(sys.client, { sinceMs: 3_600_000, archiveDir: dir }))
      if (ids.includes(r.proposal_id)) records.push(r);
    expect(records.map((r) => r.proposal_id).sort()).toEqual([...ids].sort());
    const human = records.find((r) => r.proposal_id === ids[2])!;
    expect(human).toMatchObject({
      source: 'archive',
      run_id: deleted.runId,
      status: 'approved',
      action_type: 'financial_op',
      tier: 'human-only',
      agent_id: '@engineering',
      verdict: { verdict: 'APPROVE', decided_by: 'human:scott' },
    });
    expect(human.decisions).toEqual([expect.objectContaining({ decision: 'approve', approver: 'scott' })]);
    expect(human.closed_at).not.toBeNull();
    // The two the server still has come from the server, once each, though the archive holds them too.
    expect(records.filter((r) => r.source === 'server')).toHaveLength(2);

    const serverOnly: AuditRecord[] = [];
    for await (const r of exportAudit(sys.client, { sinceMs: 3_600_000 }))
      if (ids.includes(r.proposal_id)) serverOnly.push(r);
    expect(serverOnly.map((r) => r.proposal_id)).not.toContain(ids[2]);
  });

  it('replays from the archive like a live history', async () => {
    const summary = await replayProposals(sys.client, {
      sinceMs: 3_600_000,
      archiveDir: dir,
      workflowBundle: await workflowBundle(),
    });
    expect(summary.from_archive).toBe(1);
    const ours = [...runs.values()].map((r) => r.workflowId);
    expect(summary.problems.filter((p) => ours.includes(p.workflow_id))).toEqual([]);
  });

  it('is replayed from the archive under a candidate policy, the same as a run the server still has', async () => {
    const looser = testPolicy(sys.baseDir, {
      riskMatrix: sys.policy.spec.riskMatrix.map((e) =>
        e.actionType === 'financial_op' ? { ...e, tier: 'lightweight-approval' } : e,
      ),
    });
    const result = await replay(recordedProposals(sys.client, { sinceMs: 3_600_000, ids }, { archiveDir: dir }), {
      candidate: { policy: looser, baseDir: sys.baseDir },
      recordedThresholds: sys.policy.spec.thresholds,
    });
    expect(result.replayed).toBe(3);
    expect(result.from_archive).toBe(1);
    const archived = result.rows.find((r) => r.proposal_id === ids[2])!;
    expect(archived).toMatchObject({
      source: 'archive',
      recorded: { outcome: 'person', person: 'approve', tier: 'human-only' },
      candidate: { outcome: 'APPROVE', tier: 'lightweight-approval', rule: 'patterns.clean' },
    });
    expect(result.rows.filter((r) => r.source === 'server')).toHaveLength(2);
    expect(result.changed.map((r) => r.proposal_id)).toEqual([ids[2]]);
  });

  it('is exported by the CLI from the archive', async () => {
    const { stdout } = await run(process.execPath, [BIN, 'audit', 'export', '--since', '1h', '--archive', dir], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      },
    });
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditRecord)
      .filter((r) => ids.includes(r.proposal_id));
    expect(lines.filter((r) => r.proposal_id === ids[2])).toEqual([
      expect.objectContaining({ source: 'archive', status: 'approved' }),
    ]);
    expect(lines).toHaveLength(3);
  });
});

describe('agent-judge audit verify', () => {
  async function verify(archive: string): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await run(process.execPath, [BIN, 'audit', 'verify', '--archive', archive]);
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }
  const copies: string[] = [];
  afterAll(() => {
    for (const c of copies) rmSync(c, { recursive: true, force: true });
  });
  function copyOfArchive(): string {
    const parent = mkdtempSync(join(tmpdir(), 'agent-judge-archive-copy-'));
    copies.push(parent);
    const copy = join(parent, 'archive');
    cpSync(dir, copy, { recursive: true });
    return copy;
  }

  it('prints the entries checked and the last hash of a sound archive', async () => {
    const { code, stdout } = await verify(dir);
    expect(code).toBe(0);
    const lines = readFileSync(archiveIndexPath(dir), 'utf8').trim().split('\n');
    expect(JSON.parse(stdout)).toMatchObject({
      ok: true,
      entries: 3,
      last_hash: (JSON.parse(lines.at(-1)!) as { hash: string }).hash,
    });
  });

  it('finds a tampered history file: exit 1, naming the entry', async () => {
    const copy = copyOfArchive();
    const second = readArchiveIndex(copy)[1]!.record;
    const file = join(copy, second.file);
    // One digit changed, as someone rewriting a timestamp or an id would.
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(/\d/, (d) => String((Number(d) + 1) % 10)),
    );
    const { code, stderr } = await verify(copy);
    expect(code).toBe(1);
    expect(stderr).toContain(`entry 2 of index.jsonl (${second.workflow_id} run ${second.run_id}) is broken`);
    expect(stderr).toContain('does not match its SHA-256');
  });

  it('finds a tampered index line: exit 1, naming the entry', async () => {
    const copy = copyOfArchive();
    const index = archiveIndexPath(copy);
    const lines = readFileSync(index, 'utf8').trim().split('\n');
    const entry = JSON.parse(lines[2]!) as { record: ArchiveRecord };
    entry.record.events = 1;
    lines[2] = JSON.stringify(entry);
    writeFileSync(index, `${lines.join('\n')}\n`);
    const { code, stderr } = await verify(copy);
    expect(code).toBe(1);
    expect(stderr).toContain(`entry 3 of index.jsonl (${entry.record.workflow_id} run ${entry.record.run_id})`);
    expect(stderr).toContain('hash does not match the content');
  });
});
