/**
 * `agent-judge dev` as a user runs it (`npm start`): embedded server with a SQLite file, workers,
 * clean shutdown on SIGTERM, and state that survives a restart.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { findTemporalCli } from '../../src/devserver/temporal-cli';
import { silentLogger } from '../helpers/logger';
import { freePort } from '../../src/devserver/server';
import { buttonCustomId } from '../../src/escalation/custom-id';
import { FAKE_TOKEN, FakeDiscord } from '../helpers/fake-discord';
import { InboxBrowser, visibleText } from '../helpers/inbox-browser';

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));
const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
const run = promisify(execFile);
const cwd = mkdtempSync(join(tmpdir(), 'agent-judge-dev-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(cwd, { recursive: true, force: true });
});

function startDev(
  port: number,
  env: NodeJS.ProcessEnv,
  dir = cwd,
): Promise<{ child: ChildProcess; out: () => string; err: () => string }> {
  const child = spawn(process.execPath, [BIN, 'dev', '--port', String(port), '--headless'], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`dev did not start in time:\n${out}\n${err}`)), 100_000);
    child.stdout.on('data', () => {
      if (out.includes('agent-judge is running')) {
        clearTimeout(timer);
        resolve({ child, out: () => out, err: () => err });
      }
    });
    child.on('exit', (code) => reject(new Error(`dev exited with ${code}:\n${out}\n${err}`)));
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    // 'close', not 'exit': the last stdout line (agent-judge stopped) is read by then.
    child.once('close', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

describe('agent-judge dev', () => {
  it('runs the system, shuts down cleanly on SIGTERM, and keeps state across a restart', async () => {
    const port = await freePort();
    const env = {
      ...process.env,
      TEMPORAL_CLI: findTemporalCli({ logger: silentLogger }),
      AGENT_JUDGE_APPROVERS: 'scott',
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
    };
    const first = await startDev(port, env);
    expect(first.out()).toContain(`127.0.0.1:${port}`);
    expect(first.out()).toContain('agent-judge-judge (judge)');
    expect(first.out()).toContain('approvers   scott');
    // No model configured and no Ollama here: dev says so, and what happens to full-judge proposals.
    expect(first.out()).toMatch(/judge {7}no model: no model is configured, and deepseek-v4-pro:cloud was not found/);
    expect(first.out()).toContain('spec.judge.withoutModel: escalate: a person decides');

    const { stdout } = await run(process.execPath, [BIN, 'propose', join(EXAMPLES, 'financial-op.json'), '--wait'], {
      cwd,
      env,
    });
    expect((JSON.parse(stdout) as { status: string }).status).toBe('awaiting_human');
    const mem = await run(process.execPath, [BIN, 'propose', join(EXAMPLES, 'memory-write.json'), '--wait'], {
      cwd,
      env,
    });
    expect((JSON.parse(mem.stdout) as { status: string }).status).toBe('executed');
    expect(existsSync(join(cwd, '.agent-judge', 'temporal.db'))).toBe(true);
    expect(existsSync(join(cwd, '.agent-judge', 'memory', 'memory.jsonl'))).toBe(true);

    // One /metrics for the process (SDK metrics and ours), on loopback, and the dev server's own.
    const urls =
      /metrics {5}(http:\/\/127\.0\.0\.1:\d+\/metrics) \(server: (http:\/\/127\.0\.0\.1:\d+\/metrics)\)/.exec(
        first.out(),
      );
    expect(urls, first.out()).not.toBeNull();
    const ours = await (await fetch(urls![1]!)).text();
    expect(ours).toMatch(/^agent_judge_verdicts_total\{.*decided_by="policy".*tier="no-judge".*\} 1$/m);
    expect(ours).toMatch(/^temporal_workflow_completed_total\{/m);
    expect(await (await fetch(urls![2]!)).text()).toContain('persistence_requests');

    // The policy the workers judge with is published: version 1 of this task queue, and proposals record its digest.
    const inForce = /^in force {4}version 1 on task queue agent-judge \(policy_sha256 ([0-9a-f]{12})\.\.\.\)$/m.exec(
      first.out(),
    );
    expect(inForce, first.out()).not.toBeNull();
    expect((JSON.parse(mem.stdout) as { policy_sha256: string }).policy_sha256.slice(0, 12)).toBe(inForce![1]);

    // The web approval inbox, on loopback: one banner line with its URL, and its sign-in page there.
    const inboxUrl = /^inbox {7}(http:\/\/localhost:\d+); enrol an approver's passkey: agent-judge inbox invite/m.exec(
      first.out(),
    );
    expect(inboxUrl, first.out()).not.toBeNull();
    const signIn = await new InboxBrowser(inboxUrl![1]!).get('/');
    expect(visibleText(signIn.text)).toContain('Sign in with a passkey');

    expect(await stop(first.child)).toBe(0);
    // Output for people and machines (issue 28): stdout holds the banner alone, every log line is on stderr (JSON,
    // as stderr is no terminal here), even with stdout no terminal either.
    const banner = first.out().trimEnd().split('\n');
    expect(banner[0]).toBe('agent-judge is running');
    expect(banner.at(-1)).toBe('agent-judge stopped');
    for (const line of banner.slice(1, -1)) expect(line).toMatch(/^(?:[a-z][a-z ]{0,10} {2,}|\s{12})\S/);
    const logs = first.err().trimEnd().split('\n');
    expect(logs.length).toBeGreaterThan(3);
    for (const line of logs) expect(() => JSON.parse(line) as unknown, line).not.toThrow();

    // Restart on the same SQLite file with a policy of one's own (one section): it is published as version 2, and
    // says which version it replaces. The waiting escalation is still there and can be decided.
    const mine = join(cwd, 'mine.yaml');
    writeFileSync(
      mine,
      'apiVersion: agent-judge.dev/v1alpha1\nkind: CompliancePolicy\nmetadata:\n  name: mine\n' +
        'spec:\n  thresholds:\n    human: 0.2\n',
    );
    const second = await startDev(port, { ...env, AGENT_JUDGE_POLICY: mine });
    expect(second.out()).toMatch(/^in force {4}version 2 on task queue agent-judge .*; it replaces version 1 /m);
    const decided = await run(
      process.execPath,
      [
        BIN,
        'decide',
        'f0e1d2c3-b4a5-4697-8877-665544332211',
        'approve',
        '--approver',
        'scott',
        '--reason',
        'after restart',
      ],
      { cwd, env },
    );
    expect(JSON.parse(decided.stdout)).toMatchObject({ status: 'approved', verdict: { decided_by: 'human:scott' } });
    // Capability tokens out of the box: dev made its key on first start (private to its owner) and
    // kept it across the restart; the caller performs the financial op and redeems its token first.
    const keyFile = join(cwd, '.agent-judge', 'capability.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const { token } = (JSON.parse(decided.stdout) as { capability: { token: string } }).capability;
    const redeemed = await run(
      process.execPath,
      [BIN, 'capability', 'verify', token, '--action', join(EXAMPLES, 'financial-op.json'), '--redeem'],
      { cwd, env },
    );
    expect(JSON.parse(redeemed.stdout)).toMatchObject({ valid: true, redemption: { redeemer: 'cli' } });
    expect(await stop(second.child)).toBe(0);
  });
});

describe('agent-judge dev with Discord', () => {
  it('starts the bot when DISCORD_TOKEN is set: the escalation is a DM, one click approves it', async () => {
    const fake = await FakeDiscord.start();
    const alice = fake.addUser('alice');
    const dir = mkdtempSync(join(tmpdir(), 'agent-judge-dev-discord-'));
    const port = await freePort();
    const env = {
      ...process.env,
      TEMPORAL_CLI: findTemporalCli({ logger: silentLogger }),
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      DISCORD_TOKEN: FAKE_TOKEN,
      DISCORD_API_URL: fake.apiUrl,
      AGENT_JUDGE_APPROVERS: `discord:${alice.id}`,
    };
    try {
      const dev = await startDev(port, env, dir);
      expect(dev.out()).toContain('discord     escalations go to Discord (bot connected)');
      await fake.waitForGatewaySession();
      const { stdout } = await run(process.execPath, [BIN, 'propose', join(EXAMPLES, 'financial-op.json'), '--wait'], {
        cwd: dir,
        env,
      });
      const outcome = JSON.parse(stdout) as { workflow_id: string; status: string };
      expect(outcome.status).toBe('awaiting_human');
      const message = await fake.waitFor(() => fake.messagesFor(outcome.workflow_id)[0], 20_000, 'the escalation DM');
      expect(message.channel_id).toBe(fake.dmChannelOf(alice.id)!.id);
      // dev's own inbox: the escalation links to the proposal's page there.
      const inboxUrl = /^inbox {7}(http:\/\/localhost:\d+);/m.exec(dev.out())![1]!;
      expect(message.embeds?.[0]?.url).toBe(`${inboxUrl}/p/${outcome.workflow_id}`);
      const click = await fake.click({
        messageId: message.id,
        customId: buttonCustomId('approve', outcome.workflow_id),
        userId: alice.id,
      });
      await click.final();
      const status = await run(process.execPath, [BIN, 'status', outcome.workflow_id], { cwd: dir, env });
      expect(JSON.parse(status.stdout)).toMatchObject({
        status: 'approved',
        verdict: { decided_by: `human:discord:${alice.id}` },
      });
      expect(await stop(dev.child)).toBe(0);
    } finally {
      await fake.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
