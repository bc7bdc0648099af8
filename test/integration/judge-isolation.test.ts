/**
 * The judge worker registers judge activities only: no executor is reachable from it, neither by
 * Temporal (an executor activity scheduled on the judge queue finds nothing) nor by code (nothing
 * the judge activity imports leads to an executor or a process spawner).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { testRuntimeLogger } from '../helpers/runtime-logger';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createJudgeActivities } from '../../src/activities/judge';
import { createJudgeDepsFromEnv } from '../../src/judge';
import { taskQueuesFor } from '../../src/names';
import { createWorkers } from '../../src/worker';
import { answerJson, startFakeOllama, type FakeOllama } from '../helpers/fake-ollama';
import type { ProbeResult } from '../helpers/judge-probe-workflow';
import { judgePolicy, prProposal, tempBaseDir } from '../helpers/judge-fixtures';

try {
  Runtime.install({ logger: testRuntimeLogger('ERROR') });
} catch {
  /* already installed in this process */
}

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Every module reachable from `entry` through static imports: project files and package names. */
function importGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^'"]*?from\s+['"]([^'"]+)['"]/gm)) {
      const spec = m[1] as string;
      if (spec.startsWith('.')) {
        const base = resolve(dirname(file), spec);
        const candidates = [`${base}.ts`, join(base, 'index.ts'), base];
        const found = candidates.find((c) => {
          try {
            readFileSync(c);
            return true;
          } catch {
            return false;
          }
        });
        if (found) visit(found);
      } else {
        packages.add(spec);
      }
    }
  };
  visit(entry);
  return { files, packages };
}

describe('the judge worker cannot reach an executor', () => {
  it('its activity factory yields the judge activity and the rules check, nothing else', () => {
    expect(Object.keys(createJudgeActivities({ baseDir: tempBaseDir() }))).toEqual(['judge', 'checkRules']);
  });

  it('nothing the judge activity imports leads to an executor, a process spawner or Discord', () => {
    const { files, packages } = importGraph(join(SRC, 'activities/judge.ts'));
    const rel = [...files].map((f) => relative(SRC, f));
    expect(rel).toContain('judge/index.ts');
    expect(
      rel.filter((f) => f.startsWith('executors/') || f === 'activities/execute.ts' || f.startsWith('escalation/')),
    ).toEqual([]);
    expect(
      [...packages].filter((p) => /child_process|worker_threads|^discord\.js|^node:net$|^node:dgram$/.test(p)),
    ).toEqual([]);
  });

  describe('over Temporal', () => {
    const address = inject('temporalAddress');
    const namespace = inject('temporalNamespace');
    const taskQueues = taskQueuesFor(`judge-iso-${randomUUID()}`);
    const probeQueue = `${taskQueues.workflow}-probe`;
    let native: NativeConnection;
    let connection: Connection;
    let client: Client;
    let workers: Worker[];
    let running: Promise<unknown>[];
    let fake: FakeOllama;

    beforeAll(async () => {
      native = await NativeConnection.connect({ address });
      connection = await Connection.connect({ address });
      client = new Client({ connection, namespace });
      fake = await startFakeOllama({ script: [{ content: answerJson('APPROVE', 0.9, 'fits issue #42') }] });
      const baseDir = tempBaseDir();
      const policy = await judgePolicy(baseDir, { model: 'iso-model', host: fake.host });
      const judgeOnly = await createWorkers({
        connection: native,
        namespace,
        taskQueues,
        policy,
        roles: ['judge'],
        logger: pino({ level: 'silent' }),
        baseDir,
        judge: createJudgeDepsFromEnv(policy, {}),
      });
      const probe = await Worker.create({
        connection: native,
        namespace,
        taskQueue: probeQueue,
        workflowsPath: fileURLToPath(new URL('../helpers/judge-probe-workflow.ts', import.meta.url)),
      });
      workers = [...judgeOnly, probe];
      running = workers.map((w) => w.run());
    });

    afterAll(async () => {
      for (const w of workers ?? []) if (w.getState() === 'RUNNING') w.shutdown();
      await Promise.allSettled(running ?? []);
      await native?.close();
      await connection?.close();
      fake?.assertDone();
      await fake?.close();
    });

    const probe = (activity: string, input: unknown) =>
      client.workflow.execute('probeActivity', {
        taskQueue: probeQueue,
        workflowId: `probe-${activity}-${randomUUID()}`,
        args: [taskQueues.judge, activity, input],
        workflowExecutionTimeout: '60s',
      }) as Promise<ProbeResult>;

    it('the judge queue answers the judge activity (with the model behind it)', async () => {
      const baseDir = tempBaseDir();
      const policy = await judgePolicy(baseDir, { model: 'iso-model', host: fake.host });
      const r = await probe('judge', { proposal: prProposal(), tier: 'full-judge-review', round: 0, policy });
      expect(r.ok).toBe(true);
      expect(r.result).toMatchObject({ verdict: 'APPROVE', decided_by: 'judge', judge: { model: 'iso-model' } });
    });

    it.each(['execute', 'policySnapshot', 'announceEscalation', 'recordRejection'])(
      '%s scheduled on the judge queue finds no such activity',
      async (name) => {
        const r = await probe(name, {});
        expect(r.ok).toBe(false);
        expect(r.error).toMatch(/not registered/);
        expect(r.error).toContain('judge');
      },
    );
  });
});
