/**
 * What a coding agent's hook adds to each tool call (issue 23), per hook path and per tier, interleaved in one run:
 * - the http hook: Claude Code POSTs its PreToolUse input to the resident gate (src/hooks/gate-server.ts), here from
 *   a process of its own as Claude Code does (a client in the bench's process would also wait for the gate's own
 *   work after the answer, such as its audit line);
 * - the command hook: Claude Code starts `agent-judge-hook claude-code` (bin/agent-judge-hook.mjs, the built
 *   dist/hooks/client.js) for each call, which forwards stdin to the same gate;
 * - the gate in-process: the same call handed to a `Gate` with the options the gate server gives it (what every
 *   runtime shares; the MCP proxy runs exactly this for a judged call, plus its stdio relay and the upstream call, so
 *   this is a lower bound of the proxy's latency for the call).
 * With no hook a call is performed at once: each figure is the latency the hook adds. Tiers: a no-judge read (`Read`,
 * no proposal), a lightweight file write (`Write` inside the roots) and a full-judge shell command (`Bash`) judged by
 * a loopback Ollama-API model that answers at once. Every judged call has content of its own (a new proposal); its
 * outcome is reported afterwards (PostToolUse), outside the timing.
 *
 * Sizes: BENCH_HOOKS_N calls per judged row (default 40), 4x as many no-judge reads.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import pino from 'pino';
import { durationMs } from '../src/contracts/duration';
import { Gate } from '../src/gate';
import { newAgentToken, tokenSha256 } from '../src/gate/http-auth';
import { claudeCode } from '../src/hooks/claude-code';
import { completeHookCall } from '../src/gate/complete';
import { HookGateServer } from '../src/hooks/gate-server';
import { realRoots } from '../src/gate/paths';
import { createJudgeDepsFromEnv } from '../src/judge';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { answerJson, startFakeOllama } from '../test/helpers/fake-ollama';
import { percentileOf, rotated, summarize, type BenchServer, type Row, type Target } from './lib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const HOOK_BIN = join(ROOT, 'bin/agent-judge-hook.mjs');
const FAST_HOOK_BIN = join(ROOT, 'bin/agent-judge-hook.sh');
const JUDGED_N = Number(process.env.BENCH_HOOKS_N ?? 40);
const READ_N = JUDGED_N * 4;
const WARMUP = 5;
/** The http hook's client, a process of its own: one JSON request per stdin line, `{ ms, text }` per stdout line. */
const HTTP_CLIENT = `
const rl = require('node:readline').createInterface({ input: process.stdin });
rl.on('line', async (line) => {
  const { url, token, body } = JSON.parse(line);
  const start = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + token },
    body,
  });
  const text = await res.text();
  process.stdout.write(JSON.stringify({ ms: performance.now() - start, text }) + '\\n');
});
`;

/** Sends one request through the client process; answers come back in order. */
function httpClient(): { send: (request: unknown) => Promise<{ ms: number; text: string }>; stop: () => void } {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['-e', HTTP_CLIENT]);
  const waiting: Array<(answer: { ms: number; text: string }) => void> = [];
  createInterface({ input: child.stdout }).on('line', (line) =>
    waiting.shift()?.(JSON.parse(line) as { ms: number; text: string }),
  );
  return {
    send: (request) =>
      new Promise((resolve) => {
        waiting.push(resolve);
        child.stdin.write(`${JSON.stringify(request)}\n`);
      }),
    stop: () => child.kill(),
  };
}
const AGENT = '@bench';

type Tier = 'no-judge' | 'lightweight' | 'full-judge';
type Path = 'gate in-process' | 'http hook' | 'command hook' | 'command hook, sh + curl';
const TIERS: Tier[] = ['no-judge', 'lightweight', 'full-judge'];
const PATHS: Path[] = ['gate in-process', 'http hook', 'command hook', 'command hook, sh + curl'];

interface HookAnswer {
  hookSpecificOutput?: { permissionDecision?: string; permissionDecisionReason?: string };
}

export async function benchHooks(server: BenchServer): Promise<{ rows: Row[]; targets: Target[] }> {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--if-stale'], { stdio: 'ignore' });
  const dir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-hooks-'));
  const project = join(dir, 'project');
  mkdirSync(join(project, 'src'), { recursive: true });
  writeFileSync(join(project, 'src/a.ts'), 'export const a = 1;\n');
  const token = newAgentToken();
  const tokenFile = join(dir, 'hook-token');
  writeFileSync(tokenFile, `${token}\n`);
  const fake = await startFakeOllama({ respond: () => ({ content: answerJson('APPROVE', 0.9, 'the task asks it') }) });
  const policy = defaultPolicyWith(
    {
      judge: {
        withoutModel: 'escalate',
        apiKeyEnv: 'OLLAMA_API_KEY',
        timeoutMs: 5_000,
        seed: 0,
        allowedEvidenceHosts: [],
        model: 'bench',
        host: fake.host,
      },
      // Four paths' judged calls in quick succession: the bench measures latency, not the per-agent limit.
      limits: { proposals: { perAgent: 100_000, window: '1m' } },
    },
    { baseDir: project },
  );
  const queues = taskQueuesFor(`bench-hooks-${randomUUID()}`);
  const system = await startWorkersInProcess(server.address, {
    namespace: server.namespace,
    taskQueues: queues,
    policy,
    logger: pino({ level: 'silent' }),
    baseDir: project,
    judge: createJudgeDepsFromEnv(policy, {}),
  });
  const gateServer = new HookGateServer({
    host: '127.0.0.1',
    port: 0,
    policy: system.policy,
    agents: [{ agent: AGENT, tokenSha256: tokenSha256(token) }],
    temporal: { client: system.client, taskQueue: queues.workflow },
    baseDir: project,
    auditLog: join(dir, 'hooks-audit.jsonl'),
    logger: pino({ level: 'silent' }),
  });
  const url = await gateServer.start();
  const client = httpClient();
  const h = system.policy.spec.hooks;
  // The gate the server builds for this agent and runtime (src/hooks/gate-server.ts gateFor), called directly.
  const gate = new Gate({
    client: system.client,
    taskQueue: queues.workflow,
    rules: h['claude-code'],
    performer: { agentId: AGENT, redeemer: 'hook:claude-code' },
    holdMs: durationMs(h.holdFor),
    refine: (mapping, call) =>
      completeHookCall(mapping, call, {
        shell: h.shell,
        roots: realRoots(h.files.roots, project),
        protect: h.files.protect.map((p) => p.toLowerCase()),
        denyPatterns: system.policy.spec.lightweight.deny,
      }),
  });

  const input = (tier: Tier, event = 'PreToolUse', id = randomUUID()) => {
    const [tool, toolInput] =
      tier === 'no-judge'
        ? ['Read', { file_path: join(project, 'src/a.ts') }]
        : tier === 'lightweight'
          ? ['Write', { file_path: join(project, 'src', `${id}.ts`), content: `export const x = '${id}';\n` }]
          : ['Bash', { command: `npm test -- --grep ${id}`, description: 'Run the tests of this change' }];
    return {
      session_id: 'bench-session',
      transcript_path: '/nonexistent/t.jsonl',
      cwd: project,
      permission_mode: 'default',
      hook_event_name: event,
      tool_name: tool,
      tool_input: toolInput,
      tool_use_id: id,
    };
  };
  const post = (body: unknown) =>
    fetch(`${url}/hooks/claude-code`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    }).then((r) => r.text());
  const allowed = (tier: Tier, path: Path, text: string) => {
    const decision = (JSON.parse(text) as HookAnswer).hookSpecificOutput;
    if (decision?.permissionDecision !== 'allow')
      throw new Error(`bench: ${tier} through the ${path} was not allowed: ${text.slice(0, 400)}`);
  };
  /** The command hook as `hook install` writes it: the Node client, or the sh + curl fast path before it. */
  const commandHook = (body: unknown, fast: boolean) =>
    new Promise<string>((resolve, reject) => {
      const args = ['claude-code', '--url', url, '--token-file', tokenFile];
      const child = spawn(fast ? '/bin/sh' : process.execPath, fast ? [FAST_HOOK_BIN, ...args] : [HOOK_BIN, ...args], {
        stdio: ['pipe', 'pipe', 'ignore'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`bench: hook exit ${code}: ${out}`))));
      child.stdin.end(JSON.stringify(body));
    });

  /** One call through one path: its latency (ms). The outcome report of a judged call is not timed. */
  async function once(tier: Tier, path: Path): Promise<number> {
    const id = randomUUID();
    const body = input(tier, 'PreToolUse', id);
    let ms: number;
    if (path === 'gate in-process') {
      const event = claudeCode.read(body);
      if (event.kind !== 'pre') throw new Error(`bench: ${tier} is not a pre-tool call`);
      const start = performance.now();
      const answer = await gate.decide(event.call);
      ms = performance.now() - start;
      if (answer.kind !== 'forward') throw new Error(`bench: ${tier} in-process: ${JSON.stringify(answer)}`);
      await answer.lease?.report('ok');
      return ms;
    }
    let text: string;
    if (path === 'http hook') {
      ({ ms, text } = await client.send({ url: `${url}/hooks/claude-code`, token, body: JSON.stringify(body) }));
    } else {
      const start = performance.now();
      text = await commandHook(body, path === 'command hook, sh + curl');
      ms = performance.now() - start;
    }
    allowed(tier, path, text);
    if (tier !== 'no-judge') await post({ ...input(tier, 'PostToolUse', id), tool_response: { success: true } });
    return ms;
  }

  /** A Node process that does nothing, started the same way: the command hook's floor on this machine. */
  const bareNode = () =>
    new Promise<number>((resolve, reject) => {
      const start = performance.now();
      const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
      child.on('error', reject);
      child.on('close', () => resolve(performance.now() - start));
    });

  const samples = new Map<string, number[]>();
  const add = (key: string, ms: number) => samples.set(key, [...(samples.get(key) ?? []), ms]);
  try {
    for (const tier of TIERS) {
      const n = tier === 'no-judge' ? READ_N : JUDGED_N;
      for (let round = 0; round < WARMUP + n; round++) {
        for (const path of rotated(PATHS, round)) {
          const ms = await once(tier, path);
          if (round >= WARMUP) add(`${tier}|${path}`, ms);
        }
        if (tier === 'no-judge') {
          const ms = await bareNode();
          if (round >= WARMUP) add('bare node', ms);
        }
      }
    }
  } finally {
    client.stop();
    await gateServer.close();
    await system.stop();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const of = (tier: Tier, path: Path) => samples.get(`${tier}|${path}`) ?? [];
  const rows: Row[] = [];
  for (const tier of TIERS) {
    for (const path of PATHS) {
      const s = of(tier, path);
      const ref = of(tier, 'gate in-process');
      const note =
        path === 'gate in-process'
          ? 'the gate alone (the MCP proxy runs this plus its relay)'
          : `${(percentileOf(s, 50) / percentileOf(ref, 50)).toFixed(2)}x p50 / ` +
            `${(percentileOf(s, 95) / percentileOf(ref, 95)).toFixed(2)}x p95 the gate in-process`;
      rows.push(summarize(`${tier}: ${path}`, s, note));
    }
  }
  rows.push(
    summarize('reference: `node -e ""` start to exit', samples.get('bare node') ?? [], "the command hook's floor"),
  );
  const targets: Target[] = [
    {
      name: 'no-judge decision through the http hook, p95 added',
      value: percentileOf(of('no-judge', 'http hook'), 95),
      limit: 5,
      kind: 'max',
      unit: ' ms',
    },
    {
      name: 'no-judge decision through the command hook, p95 added',
      value: percentileOf(of('no-judge', 'command hook'), 95),
      limit: 150,
      kind: 'max',
      unit: ' ms',
    },
    {
      name: 'no-judge decision through the command hook, sh + curl, p50 added (issue 43)',
      value: percentileOf(of('no-judge', 'command hook, sh + curl'), 50),
      limit: 40,
      kind: 'max',
      unit: ' ms',
    },
    {
      name: 'no-judge decision through the command hook (Node), p50 added (issue 43)',
      value: percentileOf(of('no-judge', 'command hook'), 50),
      limit: 40,
      kind: 'max',
      unit: ' ms',
    },
    {
      name: 'lightweight through the http hook / the gate in-process (<= the MCP proxy), p95',
      value: percentileOf(of('lightweight', 'http hook'), 95) / percentileOf(of('lightweight', 'gate in-process'), 95),
      limit: 1.5,
      kind: 'max',
      unit: 'x',
    },
  ];
  return { rows, targets };
}
