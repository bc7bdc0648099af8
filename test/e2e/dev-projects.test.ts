/**
 * One `agent-judge dev` for every project, as a user meets it through the built bin: dev runs in one folder, with a
 * gate port another program holds (it moves, says so, and records where), chosen inbox and metrics ports; `hook
 * install` in another folder finds it through the per-user state folder, registers that project, and the installed
 * hook is judged with that project's roots; `hook doctor` proves the hook reaches the gate; `list` in any terminal
 * finds dev's Temporal without TEMPORAL_ADDRESS. A chosen port that is taken stops dev before anything starts.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTemporalCli } from '../../src/devserver/temporal-cli';
import { freePort } from '../../src/devserver/server';
import { silentLogger } from '../helpers/logger';

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));
const base = realpathSync(mkdtempSync(join(tmpdir(), 'agent-judge-dev-projects-')));
const userState = join(base, 'user-state');
const devDir = join(base, 'dev-here');
const project = join(base, 'my-project');
const children: ChildProcess[] = [];
let held: Server;
let heldPort: number;

const env = (): NodeJS.ProcessEnv => {
  const e: NodeJS.ProcessEnv = {
    ...process.env,
    AGENT_JUDGE_HOME: userState,
    TEMPORAL_CLI: findTemporalCli({ logger: silentLogger }),
  };
  delete e.TEMPORAL_ADDRESS;
  delete e.AGENT_JUDGE_POLICY;
  delete e.AGENT_JUDGE_APPROVERS;
  delete e.AGENT_JUDGE_INBOX_URL;
  return e;
};

function cli(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd, env: env() }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs a hook command as the runtime does: `sh -c`, the hook input on stdin. */
function runHook(command: string, input: unknown, cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], { cwd, env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => resolve({ code, out }));
    child.stdin.end(JSON.stringify(input));
  });
}

function startDev(
  args: string[],
  extra: NodeJS.ProcessEnv = {},
): Promise<{ child: ChildProcess; out: () => string; code: Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, 'dev', '--headless', ...args], {
    cwd: devDir,
    env: { ...env(), ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = new Promise<number | null>((r) => child.on('close', r));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`dev did not start in time:\n${out}`)), 100_000);
    child.stdout.on('data', () => {
      if (out.includes('agent-judge is running')) {
        clearTimeout(timer);
        resolve({ child, out: () => out, code });
      }
    });
    void code.then((c) => {
      clearTimeout(timer);
      resolve({ child, out: () => out, code: Promise.resolve(c) });
    });
  });
}

beforeAll(async () => {
  mkdirSync(devDir, { recursive: true });
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'README.md'), '# my project\n');
  writeFileSync(join(devDir, 'notes.txt'), 'not the project\n');
  // Another program on the gate's port.
  held = createServer((_req, res) => res.end('someone else'));
  await new Promise<void>((r) => held.listen(0, '127.0.0.1', r));
  heldPort = (held.address() as { port: number }).port;
  writeFileSync(
    join(devDir, 'gate-port.yaml'),
    'apiVersion: agent-judge.dev/v1alpha1\nkind: CompliancePolicy\nmetadata:\n  name: gate-port\n' +
      `spec:\n  hooks:\n    gate:\n      listen: 127.0.0.1:${heldPort}\n`,
  );
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await new Promise((r) => held.close(r));
  rmSync(base, { recursive: true, force: true });
});

describe('one agent-judge dev for every project', () => {
  it('a chosen gate port that is taken stops dev before anything starts, naming the flag', async () => {
    const dev = await startDev(['--port', String(await freePort()), '--gate-port', String(heldPort)]);
    expect(await dev.code).toBe(2);
    expect(dev.out()).toContain(`--gate-port: 127.0.0.1:${heldPort} is taken`);
    expect(dev.out()).not.toContain('agent-judge is running');
  });

  it('moves a taken gate port, says so, and hooks a project elsewhere with that project as its roots', async () => {
    const [port, inboxPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
    const dev = await startDev(
      [
        '--port',
        String(port),
        '--policy',
        join(devDir, 'gate-port.yaml'),
        '--inbox-port',
        String(inboxPort),
        '--metrics-port',
        String(metricsPort),
      ],
      { AGENT_JUDGE_APPROVERS: 'scott' },
    );
    const banner = dev.out();
    expect(banner).toContain(`other terminals find it (and the gate, the inbox) in ${join(userState, 'dev.json')}`);
    expect(banner).toMatch(new RegExp(`^inbox {7}http://localhost:${inboxPort};`, 'm'));
    expect(banner).toMatch(new RegExp(`^metrics {5}http://127\\.0\\.0\\.1:${metricsPort}/metrics`, 'm'));
    const gate = /^hooks {7}gate (http:\/\/127\.0\.0\.1:(\d+)) for @local;/m.exec(banner);
    expect(gate, banner).not.toBeNull();
    expect(Number(gate![2])).not.toBe(heldPort);
    expect(banner).toContain(`moved from port ${heldPort}: it is taken by another program`);

    // hook install in the project, with no path copied: it finds dev, registers the project, checks the gate.
    const install = await cli(['hook', 'install', 'claude-code'], project);
    expect(install.code, install.stderr).toBe(0);
    const installed = JSON.parse(install.stdout) as { gate: string; project: string; token_file: string };
    expect(installed.project).toBe(project);
    expect(installed.gate).toBe(
      `the gate at ${gate![1]} (agent-judge dev in ${devDir}) answers for ${project} as @local (newly registered)`,
    );
    expect(installed.token_file.startsWith(join(userState, 'projects'))).toBe(true);
    const settings = JSON.parse(readFileSync(join(project, '.claude', 'settings.local.json'), 'utf8')) as {
      hooks: { PreToolUse: Array<{ hooks: Array<{ command: string }> }> };
    };
    const command = settings.hooks.PreToolUse[0]!.hooks[0]!.command;
    expect(command).toContain(`--url ${gate![1]}`);

    const call = (cwd: string, tool: string, input: Record<string, unknown>) =>
      runHook(
        command,
        {
          session_id: 'sess-projects',
          cwd,
          hook_event_name: 'PreToolUse',
          tool_name: tool,
          tool_input: input,
          tool_use_id: `toolu_${tool}_${cwd.length}`,
        },
        cwd,
      );
    const read = await call(project, 'Read', { file_path: 'README.md' });
    expect(read.code, read.out).toBe(0);
    expect(read.out).toContain('"permissionDecision":"allow"');
    // The roots are the project, not the folder dev runs in.
    const outside = await call(project, 'Write', { file_path: join(devDir, 'notes.txt'), content: 'x' });
    expect(outside.out).toContain(`resolves outside the hook roots (${project})`);
    expect(outside.out).toContain('"permissionDecision":"deny"');
    // A call from another folder with this project's token is refused, whatever the tool.
    const elsewhere = await call(devDir, 'Read', { file_path: 'notes.txt' });
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.out).toContain(`this hook was installed for ${project}; the call's working directory ${devDir}`);

    // The project's token registers nothing (an agent holding it must not widen its roots); the dev token does, but
    // never the home folder or the root.
    const projectToken = readFileSync(installed.token_file, 'utf8').trim();
    const register = (token: string, dir: string) =>
      fetch(`${gate![1]}/hooks/projects`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ dir }),
      });
    expect((await register(projectToken, devDir)).status).toBe(403);
    const devToken = readFileSync(join(devDir, '.agent-judge', 'hook-token'), 'utf8').trim();
    const root = await register(devToken, '/');
    expect(root.status).toBe(400);
    expect(await root.text()).toContain("the file system's root");

    // hook doctor: the installed hook, run as Claude Code runs it, reaches the gate, which records the call.
    const doctor = await cli(['hook', 'doctor', 'claude-code'], project);
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
    expect(JSON.parse(doctor.stdout)).toMatchObject({
      exit_code: 0,
      gate_saw_it: { kind: 'hook_no_judge', rule: 'claude.glob', agent: '@local' },
      verdict: 'the hook runs and the gate sees its calls',
    });

    // Another terminal, no TEMPORAL_ADDRESS: list reaches dev's --port.
    const list = await cli(['list'], base);
    expect(list.code, list.stderr).toBe(0);

    // ...and knows what the running system knows, with no AGENT_JUDGE_APPROVERS or AGENT_JUDGE_INBOX_URL of its own:
    // the approvers the workers accept (given to dev only), the inbox dev runs.
    const invite = await cli(['inbox', 'invite', '--approver', 'scott'], base);
    expect(invite.code, invite.stderr).toBe(0);
    expect(invite.stdout).toMatch(new RegExp(`^http://localhost:${inboxPort}/`));
    const stranger = await cli(['inbox', 'invite', '--approver', 'mallory'], base);
    expect(stranger.code).toBe(2);
    expect(stranger.stderr).toContain('--approver: mallory is not listed in the policy in force (version 1');
    expect(stranger.stderr).toContain('(scott)');
    const examples = fileURLToPath(new URL('../../examples/financial-op.json', import.meta.url));
    const pending = await cli(['propose', examples, '--wait', '--format', 'human'], base);
    expect(pending.code, pending.stderr).toBe(0);
    expect(pending.stdout).toMatch(new RegExp(`or in the inbox: http://localhost:${inboxPort}/p/`));

    // OpenClaw: the workspace registered the same way; the plugin's settings printed, with the moved gate's address.
    const claw = await cli(['hook', 'install', 'openclaw', '--dir', project], base);
    expect(claw.code, claw.stderr).toBe(0);
    expect((JSON.parse(claw.stdout) as { commands: string[] }).commands).toEqual(
      expect.arrayContaining([
        `openclaw config set plugins.entries.agent-judge.config.gateUrl ${JSON.stringify(gate![1])}`,
        `openclaw config set plugins.entries.agent-judge.config.tokenFile ${JSON.stringify(installed.token_file)}`,
      ]),
    );

    // Installing again keeps the project's token.
    const again = await cli(['hook', 'install', 'claude-code'], project);
    expect(JSON.parse(again.stdout)).toMatchObject({ changed: false, token_file: installed.token_file });

    dev.child.kill('SIGTERM');
    expect(await dev.code).toBe(0);
    // With dev stopped, hook install says so and changes nothing.
    const stopped = await cli(['hook', 'install', 'gemini'], project);
    expect(stopped.code).not.toBe(0);
    expect(stopped.stderr).toContain('no agent-judge dev is running for this user');
    // A dev start and some twenty CLI processes: minutes on a loaded machine.
  }, 300_000);
});
