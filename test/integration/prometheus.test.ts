/**
 * Issue 11 with the real tools: a real Prometheus (Debian's 2.42, on loopback, its own temp dir and
 * port) scrapes a running `agent-judge worker --metrics` process. The target is up, the generated
 * recording and alerting rules load and evaluate, and every PromQL expression of the Grafana
 * dashboard evaluates without error (Prometheus's HTTP API).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { submitAndWait } from '../../src/client/proposals';
import { freePort } from '../../src/devserver/server';
import { dashboardExpressions } from '../../src/metrics/dashboard';
import { taskQueuesFor } from '../../src/names';
import { proposal, workerProcessCapability } from '../helpers/system';
import { toolPath } from '../helpers/tools';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin', 'agent-judge.mjs');
const RULES = join(ROOT, 'deploy', 'prometheus', 'agent-judge.rules.yml');
const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'agent-judge.dashboard.json');

const until = async <T>(what: string, probe: () => Promise<T | undefined>, tries = 240): Promise<T> => {
  let last: Error | undefined;
  for (let i = 0; i < tries; i++) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err as Error;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${what} did not happen${last ? `: ${last.message}` : ''}`);
};

describe('a real Prometheus scraping a running worker', () => {
  const children: ChildProcess[] = [];
  let dir: string;
  let prom: string;
  let connection: Connection;
  const prefix = `test-${randomUUID()}`;
  let workerLog = '';

  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${prom}${path}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`${path}: ${body.error ?? body.status}`);
    return body.data;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-judge-prometheus-'));
    const metricsPort = await freePort();
    const capability = workerProcessCapability(dir);
    const worker = spawn(
      process.execPath,
      [
        BIN,
        'worker',
        '--metrics',
        `127.0.0.1:${metricsPort}`,
        '--task-queue-prefix',
        prefix,
        '--policy',
        capability.policyFile,
        '--log-format',
        'json',
      ],
      {
        cwd: dir,
        env: {
          ...process.env,
          ...capability.env,
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    worker.stderr.on('data', (d) => (workerLog += d));
    children.push(worker);
    await until('the worker serving /metrics', async () => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      return text.includes('agent_judge_verdicts_total') ? true : undefined;
    });

    const promPort = await freePort();
    prom = `http://127.0.0.1:${promPort}`;
    // The generated recording group evaluates once a minute (`interval: 1m`), so its first evaluation came up to a
    // minute after start. Prometheus loads a copy that differs only there: every rule, every second.
    const rules = readFileSync(RULES, 'utf8');
    const everySecond = rules.replace(/^(\s+)interval: 1m$/m, '$1interval: 1s');
    if (everySecond === rules) throw new Error(`${RULES} has no "interval: 1m" line to shorten`);
    writeFileSync(join(dir, 'agent-judge.rules.yml'), everySecond);
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        `rule_files: [${JSON.stringify(join(dir, 'agent-judge.rules.yml'))}]`,
        'scrape_configs:',
        '  - job_name: agent-judge',
        `    static_configs: [{ targets: ['127.0.0.1:${metricsPort}'] }]`,
        '',
      ].join('\n'),
    );
    const server = spawn(
      toolPath('prometheus'),
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        '--log.level=warn',
      ],
      { cwd: dir, stdio: 'ignore' },
    );
    children.push(server);
    await until('Prometheus ready', async () => ((await fetch(`${prom}/-/ready`)).ok ? true : undefined));

    connection = await Connection.connect({ address: inject('temporalAddress') });
  }, 180_000);

  afterAll(async () => {
    await connection?.close();
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await Promise.all(
      children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : Promise.resolve())),
    );
    rmSync(dir, { recursive: true, force: true });
  });

  it('the target is up and Prometheus sees a proposal the worker decided', async () => {
    const client = new Client({ connection, namespace: inject('temporalNamespace') });
    const out = await submitAndWait(client, proposal('memory_write'), { taskQueue: taskQueuesFor(prefix).workflow });
    expect(out.status, workerLog).toBe('executed');

    const targets = await until('the target up', async () => {
      const t = await api<{ activeTargets: Array<{ health: string; labels: Record<string, string> }> }>(
        '/api/v1/targets',
      );
      return t.activeTargets.every((a) => a.health === 'up') && t.activeTargets.length > 0 ? t : undefined;
    });
    expect(targets.activeTargets.map((t) => t.labels.job)).toEqual(['agent-judge']);
    const q = `sum(agent_judge_verdicts_total{decided_by="policy",taskQueue="${taskQueuesFor(prefix).workflow}"})`;
    const seen = await until('the verdict in Prometheus', async () => {
      const r = await api<{ result: Array<{ value: [number, string] }> }>(
        `/api/v1/query?query=${encodeURIComponent(q)}`,
      );
      return r.result[0]?.value[1] === '1' ? r : undefined;
    });
    expect(seen.result[0]!.value[1]).toBe('1');
  }, 180_000);

  it('the generated recording and alerting rules load and evaluate without error', async () => {
    const groups = await until('every rule evaluated', async () => {
      const data = await api<{
        groups: Array<{
          name: string;
          rules: Array<{ name: string; health: string; lastError?: string; type: string }>;
        }>;
      }>('/api/v1/rules');
      const rules = data.groups.flatMap((g) => g.rules);
      return rules.length > 0 && rules.every((r) => r.health !== 'unknown') ? data.groups : undefined;
    });
    expect(groups.map((g) => g.name).sort()).toEqual(['agent-judge.alerts', 'agent-judge.metrics']);
    const rules = groups.flatMap((g) => g.rules);
    expect(rules).toHaveLength(27);
    expect(rules.filter((r) => r.health !== 'ok')).toEqual([]);
    expect(rules.filter((r) => r.type === 'alerting').map((r) => r.name)).toContain('AgentJudgeMetricsDown');
  }, 180_000);

  it('every PromQL expression of the Grafana dashboard evaluates without error', async () => {
    const exprs = dashboardExpressions(JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Record<string, unknown>);
    expect(exprs.length).toBeGreaterThan(14);
    const errors: string[] = [];
    for (const expr of exprs) {
      // Grafana fills $__rate_interval in; Prometheus needs a literal range.
      const query = expr.replaceAll('$__rate_interval', '1m');
      const res = await fetch(`${prom}/api/v1/query?query=${encodeURIComponent(query)}`);
      const body = (await res.json()) as { status: string; error?: string };
      if (body.status !== 'success') errors.push(`${query}: ${body.error}`);
    }
    expect(errors).toEqual([]);
  });
});
