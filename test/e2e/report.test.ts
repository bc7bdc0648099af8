/**
 * `agent-judge report` as a user runs it: the built CLI reading an `audit export` file (`--input`), `--check`
 * exiting 3 on a breached fixture and 0 on a healthy one, and the HTML report opened in headless Chromium
 * (puppeteer-core): it renders with its three inline-SVG charts, makes no request and raises no console or page
 * error. The screenshot is left in /tmp for a person to look at.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';
import { afterAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/audit';
import { healthyFixture, metricsFixture } from '../helpers/report-fixture';
import { toolPath } from '../helpers/tools';

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'agent-judge-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // No server: --input reads the export; the address is unreachable on purpose.
    execFile(
      process.execPath,
      [BIN, '--address', '127.0.0.1:1', ...args],
      { env: { ...process.env, AGENT_JUDGE_POLICY: undefined } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function exportFile(name: string, records: AuditRecord[]): string {
  const file = join(dir, name);
  writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return file;
}

// Two days ending a minute ago; the window starts at the fixture's base.
const base = Date.now() - 2 * 86_400_000;
const since = new Date(base).toISOString();

describe('agent-judge report', () => {
  it('--check exits 3 when a threshold is breached, naming it', async () => {
    const file = exportFile('breached.jsonl', metricsFixture(base));
    const r = await run(['report', 'summary', '--input', file, '--since', since, '--format', 'json', '--check']);
    expect(r.stderr).toBe('agent-judge: alert thresholds breached: fullJudgeLatencyP95Seconds\n');
    expect(r.code).toBe(3);
    const report = JSON.parse(r.stdout) as { proposals: number; breached: string[]; incidents: unknown[] };
    expect(report.proposals).toBe(11);
    expect(report.incidents).toHaveLength(6);
  });

  it('--check exits 0 on a healthy export', async () => {
    const file = exportFile('healthy.jsonl', healthyFixture(base));
    const r = await run(['report', 'summary', '--input', file, '--since', since, '--check']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('No alert threshold breached.');
  });

  it('refuses a malformed export line in one line naming the line and field', async () => {
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, `${JSON.stringify({ ...healthyFixture(base)[0], started_at: 'yesterday' })}\n`);
    const r = await run(['report', 'summary', '--input', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^agent-judge: --input: line 1: started_at: .+\n$/);
  });

  it('renders the HTML report in headless Chromium: charts, no requests, no errors', async () => {
    const file = exportFile('fixture.jsonl', metricsFixture(base));
    const html = join(dir, 'report.html');
    const r = await run(['report', 'summary', '--input', file, '--since', since, '--format', 'html', '--out', html]);
    expect(r.code).toBe(0);
    expect(readFileSync(html, 'utf8')).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);

    const browser = await puppeteer.launch({
      // The headless Chromium shipped in the npm package @sparticuz/chromium (scripts/test-tools.mjs unpacks it).
      executablePath: toolPath('chromium'),
      args: ['--no-sandbox'],
    });
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      const requests: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warn') problems.push(`console ${m.type()}: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`page error: ${String(e)}`));
      page.on('request', (req) => requests.push(req.url()));
      await page.setViewport({ width: 1200, height: 900 });
      await page.goto(`file://${html}`, { waitUntil: 'load' });
      // A string, evaluated in the page (the test's TypeScript has no DOM types).
      const seen = (await page.evaluate(`({
        title: document.querySelector('h1')?.textContent ?? '',
        charts: [...document.querySelectorAll('.chart svg')].map((svg) => ({
          label: svg.getAttribute('aria-label'),
          width: svg.getBoundingClientRect().width,
          marks: svg.querySelectorAll('circle, rect.bar, polyline').length,
        })),
        metricRows: document.querySelectorAll('table')[0]?.querySelectorAll('tbody tr').length ?? 0,
        breached: document.querySelector('.status.bad')?.textContent ?? null,
      })`)) as {
        title: string;
        charts: Array<{ label: string | null; width: number; marks: number }>;
        metricRows: number;
        breached: string | null;
      };
      await page.screenshot({ path: '/tmp/agent-judge-report.png', fullPage: true });
      expect(problems).toEqual([]);
      expect(requests).toEqual([`file://${html}`]);
      expect(seen.title).toMatch(/^agent-judge summary report: since /);
      expect(seen.metricRows).toBe(8);
      expect(seen.breached).toBe('Alert thresholds breached: Latency p95: full judge review');
      expect(seen.charts.map((c) => c.label)).toEqual([
        'Judge approval rate per day',
        'Decision latency percentiles by tier',
        'Escalations to a person per day',
      ]);
      for (const c of seen.charts) {
        expect(c.width).toBeGreaterThan(200);
        expect(c.marks).toBeGreaterThan(0);
      }
    } finally {
      await browser.close();
    }
  });
});
