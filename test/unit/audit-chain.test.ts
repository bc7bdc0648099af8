import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendChained, ChainError, GENESIS, readChain, verifyChain } from '../../src/audit/chain';

const fresh = () => join(mkdtempSync(join(tmpdir(), 'chain-')), 'log.jsonl');

describe('hash-chained log', () => {
  it('chains each line to the one before and verifies', async () => {
    const file = fresh();
    const a = await appendChained(file, { n: 1 });
    const b = await appendChained(file, { n: 2 });
    expect(a.prev).toBe(GENESIS);
    expect(b.prev).toBe(a.hash);
    expect(b.seq).toBe(2);
    expect(readChain(file).map((e) => e.record)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(verifyChain(file)).toEqual({ ok: true, entries: 2, lastHash: b.hash });
  });

  it('finds an edited, a removed and a truncated line', async () => {
    const file = fresh();
    for (let n = 1; n <= 3; n++) await appendChained(file, { n });
    const lines = readFileSync(file, 'utf8').split('\n');
    writeFileSync(file, lines.join('\n').replace('{"n":2}', '{"n":20}'));
    expect(verifyChain(file)).toMatchObject({ ok: false, line: 2, reason: 'hash does not match the content' });
    writeFileSync(file, [lines[0], lines[2], ''].join('\n'));
    expect(verifyChain(file)).toMatchObject({ ok: false, line: 2 });
    writeFileSync(file, `${lines[0]}\n${lines[1]!.slice(0, 20)}`);
    expect(verifyChain(file)).toMatchObject({ ok: false, line: 2, reason: 'incomplete last line' });
    await expect(appendChained(file, { n: 4 })).rejects.toBeInstanceOf(ChainError);
  });

  it('keeps one chain when many appends race', async () => {
    const file = fresh();
    await Promise.all(Array.from({ length: 40 }, (_, n) => appendChained(file, { n })));
    expect(verifyChain(file)).toMatchObject({ ok: true, entries: 40 });
    expect(new Set(readChain<{ n: number }>(file).map((e) => e.record.n)).size).toBe(40);
  });
});

describe('the lock of a chained log', () => {
  const holdLock = (file: string, pid: number, start?: string) =>
    writeFileSync(`${file}.lock`, JSON.stringify({ pid, host: hostname(), start, token: 'theirs' }));
  const startOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19]!;

  it('is taken over at once when its holder no longer runs (killed mid-append)', async () => {
    const file = fresh();
    await appendChained(file, { n: 1 });
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    await new Promise((r) => holder.once('spawn', r));
    holdLock(file, holder.pid!);
    let done = false;
    const append = appendChained(file, { n: 2 }).then((e) => ((done = true), e));
    await new Promise((r) => setTimeout(r, 300));
    expect(done).toBe(false); // a live holder is waited for
    holder.kill('SIGKILL');
    await new Promise((r) => holder.once('exit', r));
    expect((await append).seq).toBe(2);
    expect(existsSync(`${file}.lock`)).toBe(false);
    expect(verifyChain(file)).toMatchObject({ ok: true, entries: 2 });
  });

  it("keeps one chain when many waiters find a dead holder's lock at once", async () => {
    const file = fresh();
    const holder = spawn(process.execPath, ['-e', '']);
    await new Promise((r) => holder.once('exit', r));
    holdLock(file, holder.pid!);
    await Promise.all(Array.from({ length: 20 }, (_, n) => appendChained(file, { n })));
    expect(verifyChain(file)).toMatchObject({ ok: true, entries: 20 });
  });

  it('waits for a live holder, and takes over at once when the pid now belongs to another process', async () => {
    const file = fresh();
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    await new Promise((r) => other.once('spawn', r));
    try {
      holdLock(file, other.pid!, startOf(other.pid!));
      let done = false;
      const waiting = appendChained(file, { n: 1 }).then(() => (done = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(done).toBe(false); // the holder named in the lock runs: its lock is kept
      // The same pid with another start time: the holder died and the pid was given to a new process.
      holdLock(file, other.pid!, String(Number(startOf(other.pid!)) - 1));
      await waiting;
      expect(done).toBe(true);
      expect(verifyChain(file)).toMatchObject({ ok: true, entries: 1 });
      expect(existsSync(`${file}.lock`)).toBe(false);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('leaves no lock file and no owner file behind after appends', async () => {
    const file = fresh();
    await Promise.all(Array.from({ length: 10 }, (_, n) => appendChained(file, { n })));
    expect(readdirSync(dirname(file)).sort()).toEqual(['log.jsonl']);
  });
});
