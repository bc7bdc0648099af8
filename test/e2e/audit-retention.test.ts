/**
 * Issue 11 as an operator meets it: `agent-judge dev` sets the namespace's retention from the policy on a new and on
 * an existing database and creates the archive Schedule; `agent-judge worker` warns about a namespace that keeps
 * closed workflows for less than the weekly audit needs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { findTemporalCli } from '../../src/devserver/temporal-cli';
import { silentLogger } from '../helpers/logger';
import { freePort } from '../../src/devserver/server';
import { namespaceRetentionMs } from '../../src/devserver/retention';
import { archiveScheduleId, DEFAULT_TASK_QUEUES } from '../../src/names';
import { DEFAULT_POLICY_PATH } from '../../src/policy/load';

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));
const DAY = 86_400_000;
const cwd = mkdtempSync(join(tmpdir(), 'agent-judge-retention-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(cwd, { recursive: true, force: true });
});

/** Starts a command and resolves once `ready` appears on stdout or stderr. */
function startUntil(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ child: ChildProcess; out: () => string; err: () => string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready in time:\n${out}\n${err}`)), 100_000);
    const check = () => {
      if (ready.test(out) || ready.test(err)) {
        clearTimeout(timer);
        resolve({ child, out: () => out, err: () => err });
      }
    };
    child.stdout.on('data', (d) => {
      out += d;
      check();
    });
    child.stderr.on('data', (d) => {
      err += d;
      check();
    });
    child.on('exit', (code) => reject(new Error(`exited with ${code}:\n${out}\n${err}`)));
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

/** The default policy with `spec.audit` replaced, written to a file. */
function policyFile(name: string, audit: Record<string, unknown>): string {
  const raw = parseYaml(readFileSync(DEFAULT_POLICY_PATH, 'utf8')) as { spec: Record<string, unknown> };
  raw.spec.audit = audit;
  const file = join(cwd, name);
  writeFileSync(file, toYaml(raw));
  return file;
}

async function inspect(address: string): Promise<{ retentionMs: number | null; everyMs: number[] }> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace: 'default' });
    const schedule = await client.schedule.getHandle(archiveScheduleId(DEFAULT_TASK_QUEUES)).describe();
    return {
      retentionMs: await namespaceRetentionMs(connection, 'default'),
      everyMs: (schedule.spec.intervals ?? []).map((i) => Number(i.every)),
    };
  } finally {
    await connection.close();
  }
}

describe('agent-judge dev and the audit trail', () => {
  it('sets the retention from the policy on a new and an existing database; keeps one archive Schedule', async () => {
    const port = await freePort();
    const env = {
      ...process.env,
      TEMPORAL_CLI: findTemporalCli({ logger: silentLogger }),
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
    };
    const args = ['dev', '--port', String(port), '--headless'];

    // A new database: start-dev creates the namespace with 24 h; dev sets the policy's 90 days.
    const first = await startUntil(args, env, /agent-judge is running/);
    expect(first.out()).toContain('retention   90d');
    expect(first.out()).toMatch(
      /archive {5}.*\.agent-judge\/archive \(Schedule agent-judge-history-archive, every 1h\)/,
    );
    expect(await inspect(`127.0.0.1:${port}`)).toEqual({ retentionMs: 90 * DAY, everyMs: [3_600_000] });
    expect(await stop(first.child)).toBe(0);

    // The same database with another policy: both change in place.
    const policy = policyFile('short.yaml', { retention: '30d', archive: { every: '2h' } });
    const second = await startUntil([...args, '--policy', policy], env, /agent-judge is running/);
    expect(second.out()).toContain('retention   30d');
    expect(await inspect(`127.0.0.1:${port}`)).toEqual({ retentionMs: 30 * DAY, everyMs: [7_200_000] });
    expect(await stop(second.child)).toBe(0);
  });
});

describe('agent-judge worker and a short retention', () => {
  it('warns in one line naming the setting and the figure', async () => {
    // The test server's namespace keeps one day: start-dev's own, or the one a cluster run registers.
    const env = {
      ...process.env,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      LOG_FORMAT: 'json',
    };
    const prefix = `retention-${process.pid}`;
    const worker = await startUntil(
      ['worker', '--role', 'executor', '--task-queue-prefix', prefix],
      env,
      /workers running/,
    );
    const warnings = worker
      .err()
      .split('\n')
      .filter((l) => l.includes('keeps closed workflows'))
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.level).toBe(40);
    expect(warnings[0]!.msg).toContain(
      `namespace ${inject('temporalNamespace')} keeps closed workflows for 1d (its workflow execution retention)`,
    );
    expect(warnings[0]!.msg).toMatch(/^namespace /);
    expect(warnings[0]!.msg).toContain('the weekly audit review needs at least 8d');
    expect(await stop(worker.child)).toBe(0);
  });
});
