/**
 * Issue 10: the MCP proxy killed with SIGKILL mid-call. The real SDK client starts `bin/agent-judge.mjs mcp` over
 * stdio in front of @modelcontextprotocol/server-filesystem; a tap between the proxy and the upstream logs every
 * tools/call that reaches the upstream (shared by the killed proxy and its successor), and can stop one call at a
 * chosen point so the kill lands exactly there. A new proxy then gets the identical call. What a user must see: an
 * approved write happens at most once (exactly once when the upstream got it), checked on disk and in the tap's log,
 * and the re-call's answer says what happened.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redeemCapability } from '../../src/client/capabilities';
import { decide, getStatus } from '../../src/client/proposals';
import { capabilityBinding } from '../../src/contracts/capability';
import { findTemporalCli } from '../../src/devserver/temporal-cli';
import { silentLogger } from '../helpers/logger';
import { freePort, startDevServer, type DevServer } from '../../src/devserver/server';
import { createJudgeDepsFromEnv } from '../../src/judge';
import { taskQueuesFor } from '../../src/names';
import { startWorkersInProcess } from '../../src/worker';
import { testPolicy, workflowBundle } from '../helpers/system';
import {
  callTool,
  connectProxy,
  EVIDENCE,
  heldProposalFor,
  mcpSpec,
  readTap,
  scott,
  startMcpEnv,
  tappedFsUpstream,
  textOf,
  until,
  upstreamCalls,
  verdictOf,
  type ConnectedProxy,
  type McpEnv,
  type ProxyTarget,
} from '../helpers/mcp';

/** An approved call may be forwarded within 20 s of its approval; then an unreported lease ends `uncertain`. */
const PERFORM_WITHIN_S = 20;

let env: McpEnv;
const proxies: ConnectedProxy[] = [];

beforeAll(async () => {
  env = await startMcpEnv(mcpSpec({ holdFor: '3s', performWithin: `${PERFORM_WITHIN_S}s` }));
});
afterAll(async () => {
  for (const p of proxies) await p.agent.close().catch(() => undefined);
  await env?.sys.stop();
});

async function proxy(log: string, mode = 'pass'): Promise<ConnectedProxy> {
  const p = await connectProxy(env, tappedFsUpstream(env, log, mode));
  proxies.push(p);
  return p;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `kill -9` the proxy process; its agent's open call fails (the connection is gone). */
async function killHard(p: ConnectedProxy, open: Promise<unknown>): Promise<void> {
  process.kill(p.pid, 'SIGKILL');
  await expect(open).rejects.toThrow();
  await until('the proxy process to be gone', () => (alive(p.pid) ? undefined : true));
}

const approve = (workflowId: string) =>
  decide(
    env.sys.client,
    workflowId,
    { decision: 'approve', approver: 'scott', reason: 'ok', via: 'cli' },
    { key: scott },
  );

/** The proposal once its caller's outcome is recorded (the proxy reports it right after the agent has the answer). */
const settled = (workflowId: string) =>
  until('the outcome on the proposal', async () => {
    const s = await getStatus(env.sys.client, workflowId);
    return s.caller?.outcome ? s : undefined;
  });

const writeArgs = (path: string, content: string, justification?: string) => ({
  path,
  content,
  ...(justification ? { _agent_judge: { justification, cited_evidence: EVIDENCE } } : {}),
});

/** Starts the write (held: a person decides writes) and returns the open call and its proposal's workflow id. */
async function heldWrite(p: ConnectedProxy, path: string, content: string) {
  const open = callTool(p.agent, 'write_file', writeArgs(path, content, `write ${path}`), {
    onprogress: () => undefined,
    resetTimeoutOnProgress: true,
  });
  open.catch(() => undefined); // awaited by killHard
  const workflowId = await heldProposalFor(env.sys.client, env.sys.taskQueues.workflow, path);
  return { open, workflowId };
}

describe('agent-judge mcp killed with SIGKILL mid-call, then the identical call through a new proxy', () => {
  it('killed while the call is held: the re-call is the same pending proposal; approved, it writes once', async () => {
    const path = join(env.workspace, 'held.txt');
    const log = join(env.baseDir, 'tap-held.jsonl');
    const first = await proxy(log);
    const { open, workflowId } = await heldWrite(first, path, 'held\n');
    await killHard(first, open);

    const second = await proxy(log);
    const pending = await callTool(second.agent, 'write_file', writeArgs(path, 'held\n'));
    expect(verdictOf(pending)).toMatchObject({ outcome: 'PENDING', workflow_id: workflowId, status: 'awaiting_human' });
    expect(existsSync(path)).toBe(false);

    await approve(workflowId);
    const done = await callTool(second.agent, 'write_file', writeArgs(path, 'held\n'));
    expect(done.isError).toBeFalsy();
    expect(textOf(done)).toContain('Successfully wrote');
    expect(readFileSync(path, 'utf8')).toBe('held\n');
    expect(upstreamCalls(log, 'write_file')).toHaveLength(1);
    expect(await settled(workflowId)).toMatchObject({ status: 'executed', caller: { outcome: 'ok' } });

    // Once more: the approved call was performed, so this is a new proposal for a person; nothing is written.
    const mtime = statSync(path).mtimeMs;
    const again = await callTool(second.agent, 'write_file', writeArgs(path, 'held\n', 'the same file, again'));
    expect(verdictOf(again)).toMatchObject({ outcome: 'PENDING' });
    expect(verdictOf(again)!.workflow_id).not.toBe(workflowId);
    expect(statSync(path).mtimeMs).toBe(mtime);
    expect(upstreamCalls(log, 'write_file')).toHaveLength(1);
  });

  it('killed while held, approved while no proxy runs: the new proxy forwards the re-call once', async () => {
    const path = join(env.workspace, 'approved-meanwhile.txt');
    const log = join(env.baseDir, 'tap-approved.jsonl');
    const first = await proxy(log);
    const { open, workflowId } = await heldWrite(first, path, 'approved\n');
    await killHard(first, open);
    await approve(workflowId);

    const second = await proxy(log);
    const done = await callTool(second.agent, 'write_file', writeArgs(path, 'approved\n'));
    expect(done.isError).toBeFalsy();
    expect(readFileSync(path, 'utf8')).toBe('approved\n');
    expect(upstreamCalls(log, 'write_file')).toHaveLength(1);
    expect(await settled(workflowId)).toMatchObject({ status: 'executed', caller: { outcome: 'ok' } });
  });

  it('its token redeemed by someone else (a redemption leasing nothing): the re-call forwards nothing', async () => {
    // A proxy redeems and leases in one Update, so it never leaves a token redeemed and the call not leased; a token
    // someone else redeemed (`capability verify --redeem`, say) is spent, and the call is never forwarded.
    const path = join(env.workspace, 'redeemed.txt');
    const log = join(env.baseDir, 'tap-redeemed.jsonl');
    const first = await proxy(log);
    const { open, workflowId } = await heldWrite(first, path, 'redeemed\n');
    await killHard(first, open);
    await approve(workflowId);
    const st = await getStatus(env.sys.client, workflowId);
    const { aud, action_sha256 } = capabilityBinding(st.proposal);
    await redeemCapability(env.sys.client, {
      token: st.capability!.token,
      action: { action_sha256 },
      audience: aud,
      redeemer: 'cli',
      nonce: 'someone-else',
    });

    const second = await proxy(log);
    const done = await callTool(second.agent, 'write_file', writeArgs(path, 'redeemed\n'));
    expect(done.isError).toBe(true);
    expect(JSON.stringify(done.content)).toContain("the approval's capability token was refused");
    expect(JSON.stringify(done.content)).toContain('already redeemed');
    expect(existsSync(path)).toBe(false);
    expect(upstreamCalls(log, 'write_file')).toHaveLength(0);
  });

  it(
    'killed holding the lease, before the upstream got the call: never forwarded twice; it ends uncertain',
    { timeout: 120_000 },
    async () => {
      const path = join(env.workspace, 'leased.txt');
      const log = join(env.baseDir, 'tap-leased.jsonl');
      // The tap holds the write: the proxy holds the lease and has sent it, the upstream never sees it.
      const first = await proxy(log, 'hold-request:write_file');
      const { open, workflowId } = await heldWrite(first, path, 'leased\n');
      await approve(workflowId);
      await until('the leased call to leave the proxy', () =>
        readTap(log).some((e) => e.held === 'hold-request') ? true : undefined,
      );
      await killHard(first, open);
      const leased = await getStatus(env.sys.client, workflowId);
      expect(leased.caller).toMatchObject({ outcome: null });
      expect(leased.caller?.forwarded_at).toBeTruthy();

      const second = await proxy(log);
      const refused = await callTool(second.agent, 'write_file', writeArgs(path, 'leased\n'));
      expect(refused.isError).toBe(true);
      expect(verdictOf(refused)).toMatchObject({ outcome: 'REFUSED', workflow_id: workflowId });
      // The re-call says what the agent can know: forwarded once, outcome unknown, and when it becomes `uncertain`.
      expect(textOf(refused)).toContain('already forwarded once');
      expect(textOf(refused)).toContain('No outcome was reported yet');
      expect(textOf(refused)).toContain(leased.caller!.deadline);
      expect(existsSync(path)).toBe(false);
      expect(upstreamCalls(log, 'write_file')).toHaveLength(0);

      // Nobody reports before the window closes: it may have happened, so the proposal ends `uncertain`.
      const ended = await until(
        'the lease to end uncertain',
        async () => {
          const s = await getStatus(env.sys.client, workflowId);
          return s.status === 'uncertain' ? s : undefined;
        },
        (PERFORM_WITHIN_S + 30) * 4,
      );
      expect(ended.caller).toMatchObject({ outcome: 'upstream_failure' });
      // The identical call now is a new proposal, for a person to decide again; nothing is forwarded meanwhile.
      const fresh = await callTool(second.agent, 'write_file', writeArgs(path, 'leased\n', 'the leased one, again'));
      expect(verdictOf(fresh)).toMatchObject({ outcome: 'PENDING' });
      expect(verdictOf(fresh)!.workflow_id).not.toBe(workflowId);
      expect(existsSync(path)).toBe(false);
      expect(upstreamCalls(log, 'write_file')).toHaveLength(0);
    },
  );

  it('killed after the upstream wrote, before its answer reached the proxy: written exactly once', async () => {
    const path = join(env.workspace, 'answered.txt');
    const log = join(env.baseDir, 'tap-answered.jsonl');
    // The tap sends the write on and swallows the upstream's answer: the file is written, the proxy never hears.
    const first = await proxy(log, 'hold-response:write_file');
    const { open, workflowId } = await heldWrite(first, path, 'answered\n');
    await approve(workflowId);
    await until('the upstream to answer the write', () =>
      readTap(log).some((e) => e.event === 'answer-held') ? true : undefined,
    );
    await killHard(first, open);
    expect(readFileSync(path, 'utf8')).toBe('answered\n');
    // A person edits the file: a second forwarding of the approved write would overwrite this.
    writeFileSync(path, 'edited since\n');

    const second = await proxy(log);
    const refused = await callTool(second.agent, 'write_file', writeArgs(path, 'answered\n'));
    expect(verdictOf(refused)).toMatchObject({ outcome: 'REFUSED', workflow_id: workflowId });
    expect(textOf(refused)).toContain('already forwarded once');
    expect(readFileSync(path, 'utf8')).toBe('edited since\n');
    expect(upstreamCalls(log, 'write_file')).toHaveLength(1);
  });
});

describe('Temporal goes down while the proxy runs (a dev server of this test, not the shared one)', () => {
  const cliPath = findTemporalCli({ logger: silentLogger });
  let dir: string;
  let server: DevServer | undefined;
  let workers: Awaited<ReturnType<typeof startWorkersInProcess>> | undefined;
  let agentProxy: ConnectedProxy | undefined;
  afterAll(async () => {
    await agentProxy?.agent.close().catch(() => undefined);
    await workers?.stop().catch(() => undefined);
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'a judged call is refused and nothing is forwarded; no-judge calls pass; when it is back, judged calls work',
    { timeout: 240_000 },
    async () => {
      dir = mkdtempSync(join(tmpdir(), 'agent-judge-mcp-temporal-down-'));
      const port = await freePort();
      const dbFile = join(dir, 'temporal.db');
      const serve = () =>
        startDevServer({
          cliPath,
          headless: true,
          port,
          dbFile,
          readyTimeoutMs: 90_000,
          logFile: join(dir, 'srv.log'),
        });
      server = await serve();
      const spec = mcpSpec({ holdFor: '5s' });
      const taskQueues = taskQueuesFor(`mcp-down-${randomUUID()}`);
      workers = await startWorkersInProcess(server.address, {
        namespace: server.namespace,
        taskQueues,
        policy: testPolicy(dir, spec),
        logger: pino({ level: 'silent' }),
        judge: createJudgeDepsFromEnv(testPolicy('/tmp', spec), {}),
        baseDir: dir,
        workflowBundle: await workflowBundle(),
      });
      const workspace = join(dir, '.agent-judge/workspace');
      mkdirSync(workspace, { recursive: true });
      writeFileSync(join(workspace, 'hello.txt'), 'hello');
      const policyFile = join(dir, 'policy.json');
      writeFileSync(policyFile, JSON.stringify(workers.policy));
      const target: ProxyTarget = {
        baseDir: dir,
        policyFile,
        taskQueuePrefix: taskQueues.workflow,
        address: server.address,
        namespace: server.namespace,
        // A call to a stopped Temporal fails after three tries, not the SDK's ten (about 20 s of backoff): the same
        // refusal, sooner.
        env: { AGENT_JUDGE_TEMPORAL_ATTEMPTS: '3' },
      };
      const log = join(dir, 'tap.jsonl');
      agentProxy = await connectProxy(target, tappedFsUpstream(target, log));
      const { agent } = agentProxy;
      const mkdir = (name: string) => callTool(agent, 'create_directory', { path: join(workspace, name) });

      // Up: a judged (lightweight) call is approved and forwarded.
      expect((await mkdir('before')).isError).toBeFalsy();
      expect(existsSync(join(workspace, 'before'))).toBe(true);

      await server.stop();
      const down = await mkdir('while-down');
      expect(down.isError).toBe(true);
      expect(verdictOf(down)).toMatchObject({ outcome: 'REFUSED' });
      expect(textOf(down)).toMatch(/^REJECT: agent-judge cannot reach its judge \(Temporal at /);
      expect(textOf(down)).toContain('Not performed');
      expect(existsSync(join(workspace, 'while-down'))).toBe(false);
      expect(upstreamCalls(log, 'create_directory').map((c) => c.arguments?.path)).toEqual([join(workspace, 'before')]);
      // No-judge calls need no judge: the policy lets them through with a local audit line, Temporal or not.
      const read = await callTool(agent, 'read_text_file', { path: join(workspace, 'hello.txt') });
      expect(read.isError).toBeFalsy();
      expect(textOf(read)).toContain('hello');

      // Back on the same port and database: the same proxy process judges again, without a restart.
      server = await serve();
      const back = await until(
        'a judged call to work again',
        async () => {
          const r = await mkdir('after');
          return r.isError ? undefined : r;
        },
        // Each refused try is now about a second (three attempts), no longer about 20 s: more tries, the same bound.
        120,
      );
      expect(back.isError).toBeFalsy();
      expect(existsSync(join(workspace, 'after'))).toBe(true);
      expect(existsSync(join(workspace, 'while-down'))).toBe(false);
      expect(upstreamCalls(log, 'create_directory')).toHaveLength(2);
    },
  );
});
