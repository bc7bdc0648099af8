/**
 * `agent-judge inbox` and `agent-judge inbox invite` as an operator runs them (the built CLI): the inbox starts on
 * loopback against the run's Temporal server and says where; an invite for a listed approver prints a link to that
 * inbox which opens its enrolment page; an unlisted approver and a bad lifetime are refused with the flag named.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { InboxBrowser, visibleText } from '../helpers/inbox-browser';

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'agent-judge-inbox-cli-'));
const env = { ...process.env, AGENT_JUDGE_APPROVERS: 'scott', AGENT_JUDGE_POLICY: undefined };
const stateDir = join(dir, 'state');
let inbox: ChildProcess | undefined;
afterAll(() => {
  inbox?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env, cwd: dir, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('agent-judge inbox', () => {
  it('serves on loopback; inbox invite prints a one-time link to it; refusals name the flag', async () => {
    const address = inject('temporalAddress');
    const namespace = inject('temporalNamespace');
    inbox = spawn(
      process.execPath,
      [BIN, '--address', address, '--namespace', namespace, 'inbox', '--port', '0', '--state-dir', stateDir],
      { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    inbox.stdout!.on('data', (d) => (out += String(d)));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`inbox did not start within 60 s:\n${out}`)), 60_000);
      inbox!.stdout!.on('data', () => {
        const m = /^inbox {7}(http:\/\/localhost:\d+) \(approvers: scott\)/m.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      inbox!.on('exit', (code) => reject(new Error(`inbox exited with ${code}:\n${out}`)));
    });

    const invite = await run(['inbox', 'invite', '--approver', 'scott', '--expires', '2h', '--state-dir', stateDir]);
    expect(invite.code).toBe(0);
    const [link, note] = invite.stdout.trimEnd().split('\n');
    expect(link).toMatch(new RegExp(`^${url}/enrol/[A-Za-z0-9_-]{43}$`));
    expect(note).toMatch(/^enrols one passkey for scott; works once, until \d{4}-\d{2}-\d{2}T/);
    const page = await new InboxBrowser(url).get(new URL(link!).pathname);
    expect(page.status).toBe(200);
    expect(visibleText(page.text)).toContain('Enrol a passkey for scott');

    const stranger = await run(['inbox', 'invite', '--approver', 'mallory', '--state-dir', stateDir]);
    expect(stranger.code).toBe(2);
    expect(stranger.stderr).toContain(
      "--approver: mallory is not listed in the policy's spec.escalation.approvers (scott)",
    );
    const forever = await run(['inbox', 'invite', '--approver', 'scott', '--expires', '90d', '--state-dir', stateDir]);
    expect(forever.code).toBe(2);
    expect(forever.stderr).toContain('--expires: expected a duration from 1s to 30d');
    const badUrl = await run(['inbox', 'invite', '--approver', 'scott', '--public-url', 'http://example.org']);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain('--public-url: expected https://host[:port] with no path');

    const closed = new Promise<number | null>((resolve) => inbox!.once('close', resolve));
    inbox.kill('SIGTERM');
    expect(await closed).toBe(0);
    inbox = undefined;
  });
});
