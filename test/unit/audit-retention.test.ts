/**
 * Issue 11, "Keep every decision", without a server: the retention and archive settings of the policy, the worker's
 * retention warning, archive file names, and what `verifyArchive` finds in an archive written by hand.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CompliancePolicySchema, durationMs } from '../../src/contracts/policy';
import { PolicyError } from '../../src/contracts/errors';
import { defaultPolicyWith } from '../../src/policy/load';
import { AUDIT_CADENCE_RETENTION_MS, retentionWarning } from '../../src/devserver/retention';
import {
  archiveIndexPath,
  archivedRuns,
  historyFileFor,
  sha256,
  verifyArchive,
  writeHistoryFile,
  type ArchiveRecord,
} from '../../src/audit/archive';
import { appendChained } from '../../src/audit/chain';

const DAY = 86_400_000;
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'agent-judge-archive-unit-'));
  dirs.push(d);
  return d;
}

describe('spec.audit.retention and spec.audit.archive', () => {
  it('default to 90 days, an hourly archive, and a folder under the state folder', () => {
    const base = tempDir();
    const audit = defaultPolicyWith({}, { baseDir: base }).spec.audit;
    expect(durationMs(audit.retention)).toBe(90 * DAY);
    expect(durationMs(audit.archive.every)).toBe(3_600_000);
    expect(audit.archive.dir).toBe(join(base, '.agent-judge', 'archive'));
  });

  it('refuse a retention under a day, naming the field and the rule', () => {
    expect(() => defaultPolicyWith({ audit: { retention: '12h' } })).toThrow(PolicyError);
    expect(() => defaultPolicyWith({ audit: { retention: '12h' } })).toThrow(/spec\.audit\.retention.*at least 1d/);
    expect(() => defaultPolicyWith({ audit: { retention: 'forever' } })).toThrow(/spec\.audit\.retention/);
  });

  it('refuse an archive interval that would let histories expire before they are copied', () => {
    expect(() => defaultPolicyWith({ audit: { retention: '1d', archive: { every: '13h' } } })).toThrow(
      /spec\.audit\.archive\.every.*at most half of retention/,
    );
    expect(() => defaultPolicyWith({ audit: { archive: { every: '10s' } } })).toThrow(
      /spec\.audit\.archive\.every.*at least 1m/,
    );
    expect(defaultPolicyWith({ audit: { retention: '2d', archive: { every: '1d' } } }).spec.audit.retention).toBe('2d');
  });

  it('refuse an archive folder agents can write to', () => {
    expect(() => defaultPolicyWith({ audit: { archive: { dir: '.agent-judge/workspace/archive' } } })).toThrow(
      /spec\.files\.roots.*contains spec\.audit\.archive\.dir/,
    );
  });

  it('are in the JSON Schema `agent-judge schema policy` prints', () => {
    const schema = JSON.stringify(z.toJSONSchema(CompliancePolicySchema, { io: 'input' }));
    expect(schema).toContain('"retention"');
    expect(schema).toContain('"archive"');
  });
});

describe('the worker retention warning', () => {
  it('names the namespace, its retention, what the audit needs and how to change it', () => {
    const line = retentionWarning('default', DAY)!;
    expect(line).toMatch(/^namespace default keeps closed workflows for 1d .*needs at least 8d/);
    expect(line).toContain('temporal operator namespace update --retention 192h default');
    expect(line).not.toContain('\n');
  });

  it('stays quiet when the namespace keeps a week and a day, or does not say', () => {
    expect(retentionWarning('default', AUDIT_CADENCE_RETENTION_MS)).toBeNull();
    expect(retentionWarning('default', 90 * DAY)).toBeNull();
    expect(retentionWarning('default', null)).toBeNull();
  });
});

describe('archive files', () => {
  it('keep proposal ids as they are and name any other id by its hash, inside the folder', () => {
    expect(historyFileFor('proposal-0123abcd', 'a1b2-c3')).toBe('histories/proposal-0123abcd/a1b2-c3.json');
    const hostile = historyFileFor('../../etc/passwd', '..');
    expect(hostile).toMatch(/^histories\/sha256-[0-9a-f]{64}\/sha256-[0-9a-f]{64}\.json$/);
  });

  async function archiveOf(n: number): Promise<{ dir: string; records: ArchiveRecord[] }> {
    const dir = tempDir();
    const records: ArchiveRecord[] = [];
    for (let i = 1; i <= n; i++) {
      const content = JSON.stringify({ events: [{ eventId: String(i) }] });
      const file = historyFileFor(`proposal-${i}`, `run-${i}`);
      writeHistoryFile(dir, file, content);
      const record: ArchiveRecord = {
        workflow_id: `proposal-${i}`,
        run_id: `run-${i}`,
        workflow_type: 'proposalWorkflow',
        file,
        sha256: sha256(content),
        bytes: content.length,
        events: 1,
        start_time: new Date(Date.UTC(2026, 10, i)).toISOString(),
        close_time: null,
      };
      records.push(record);
      await appendChained(archiveIndexPath(dir), record);
    }
    return { dir, records };
  }

  it('verify: a sound archive gives its entry count and last hash', async () => {
    const { dir } = await archiveOf(3);
    const lines = readFileSync(archiveIndexPath(dir), 'utf8').trim().split('\n');
    expect(verifyArchive(dir)).toEqual({
      ok: true,
      entries: 3,
      last_hash: (JSON.parse(lines[2]!) as { hash: string }).hash,
      unindexed: [],
    });
  });

  it('verify: a changed history file is found, naming its entry', async () => {
    const { dir, records } = await archiveOf(3);
    writeFileSync(join(dir, records[1]!.file), JSON.stringify({ events: [{ eventId: '99' }] }));
    const verdict = verifyArchive(dir);
    expect(verdict).toMatchObject({ ok: false, line: 2, entries: 1, workflow_id: 'proposal-2', run_id: 'run-2' });
    expect(!verdict.ok && verdict.reason).toBe(`${records[1]!.file} does not match its SHA-256`);
  });

  it('verify: a changed index line is found, naming its entry', async () => {
    const { dir } = await archiveOf(3);
    const index = archiveIndexPath(dir);
    const lines = readFileSync(index, 'utf8').trim().split('\n');
    const entry = JSON.parse(lines[1]!) as { record: ArchiveRecord };
    entry.record.close_time = '2026-11-02T00:00:00.000Z';
    lines[1] = JSON.stringify(entry);
    writeFileSync(index, `${lines.join('\n')}\n`);
    expect(verifyArchive(dir)).toMatchObject({ ok: false, line: 2, workflow_id: 'proposal-2' });
  });

  it('verify: a file no entry names is listed, not counted', async () => {
    const { dir } = await archiveOf(1);
    writeHistoryFile(dir, historyFileFor('proposal-9', 'run-9'), '{}');
    expect(verifyArchive(dir)).toMatchObject({ ok: true, entries: 1, unindexed: ['histories/proposal-9/run-9.json'] });
  });

  it('archivedRuns: each run once, skipping runs the server still has, from a start time on', async () => {
    const { dir, records } = await archiveOf(3);
    await appendChained(archiveIndexPath(dir), records[0]!); // indexed twice (two racing writers)
    expect(archivedRuns(dir).map((r) => r.run_id)).toEqual(['run-1', 'run-2', 'run-3']);
    expect(archivedRuns(dir, { skip: new Set(['run-2']) }).map((r) => r.run_id)).toEqual(['run-1', 'run-3']);
    const since = Date.parse(records[1]!.start_time);
    expect(archivedRuns(dir, { sinceEpochMs: since }).map((r) => r.run_id)).toEqual(['run-3']);
  });
});
