/**
 * What the OpenClaw plugin (dist/openclaw, docs/openclaw.md) adds to a tool call: the same call with the plugin's
 * hooks and without them, interleaved sample by sample. The real OpenClaw takes 20 s and more to start one agent turn
 * on this machine, so it is not run per call: the built plugin (dist/openclaw/plugin.js, the file OpenClaw loads) is
 * registered on an object with OpenClaw's plugin API shape, as test/integration/openclaw-plugin.test.ts does, and its
 * `before_tool_call` handler is called with OpenClaw's event and context fields. It posts to the real resident gate
 * (HookGateServer on loopback) with the real workers on the bench's Temporal dev server, all in this process.
 *
 * Without the plugin a call is the tool's own work: a file read (`read`) or a file write (`write`), done with
 * node:fs as OpenClaw's tools do. With the plugin it is `before_tool_call`, then the same work. `after_tool_call` is
 * called afterwards, outside the timing: OpenClaw runs it without awaiting it (the outcome's report does not delay
 * the turn). Tiers: a no-judge read (no proposal, an audit line) and a lightweight write (a new file each time: a new
 * proposal, approved by the lightweight rules, leased, its outcome reported). The added latency is the plugin's row
 * minus the plain row, at p50 and at p95.
 *
 * Sizes: BENCH_OPENCLAW_N calls per write row (default 40), 4x as many reads.
 */
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pino from 'pino';
import { newAgentToken, tokenSha256 } from '../src/gate/http-auth';
import { HookGateServer } from '../src/hooks/gate-server';
import { taskQueuesFor } from '../src/names';
import type { OpenClawPluginApi } from '../src/openclaw/plugin';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { percentileOf, rotated, summarize, type BenchServer, type Row } from './lib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WRITE_N = Number(process.env.BENCH_OPENCLAW_N ?? 40);
const READ_N = WRITE_N * 4;
const WARMUP = 5;
type Tier = 'no-judge' | 'lightweight';
type Path = 'plugin' | 'no plugin';
const PATHS: Path[] = ['plugin', 'no plugin'];

type Handler = (event: Record<string, unknown>, ctx: Record<string, unknown>) => Promise<unknown>;

export async function benchOpenClaw(server: BenchServer): Promise<Row[]> {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--if-stale'], { stdio: 'ignore' });
  const dir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-openclaw-'));
  mkdirSync(join(dir, 'workspace'));
  const workspace = realpathSync(join(dir, 'workspace'));
  writeFileSync(join(workspace, 'notes.txt'), 'the notes\n');
  const token = newAgentToken();
  const tokenFile = join(dir, 'hook-token');
  writeFileSync(tokenFile, `${token}\n`);
  const policy = defaultPolicyWith({}, { baseDir: dir });
  const queues = taskQueuesFor(`bench-openclaw-${randomUUID()}`);
  const system = await startWorkersInProcess(server.address, {
    namespace: server.namespace,
    taskQueues: queues,
    policy,
    logger: pino({ level: 'silent' }),
    baseDir: dir,
  });
  const gate = new HookGateServer({
    host: '127.0.0.1',
    port: 0,
    policy: system.policy,
    agents: [{ agent: '@claw', tokenSha256: tokenSha256(token) }],
    temporal: { client: system.client, taskQueue: queues.workflow },
    baseDir: workspace,
    auditLog: join(dir, 'hooks-audit.jsonl'),
    logger: pino({ level: 'silent' }),
  });
  const gateUrl = await gate.start();

  // The plugin as OpenClaw loads it: the built entry's `register(api)`, then the handlers it registered.
  const entry = (await import(pathToFileURL(join(ROOT, 'dist/openclaw/plugin.js')).href)) as {
    default: { register(api: OpenClawPluginApi): void };
  };
  const handlers = new Map<string, Handler>();
  entry.default.register({
    pluginConfig: { gateUrl, tokenFile, cwd: workspace, timeoutMs: 60_000 },
    config: { agents: { defaults: { workspace } } },
    logger: { info: () => undefined, warn: () => undefined },
    on: (hook: string, handler: Handler) => handlers.set(hook, handler),
  } as unknown as OpenClawPluginApi);
  const before = handlers.get('before_tool_call')!;
  const after = handlers.get('after_tool_call')!;

  /** The tool's own work, as OpenClaw's `read` / `write` do it. */
  const perform = async (tier: Tier, params: Record<string, string>): Promise<unknown> =>
    tier === 'no-judge'
      ? readFile(join(workspace, params.path!), 'utf8')
      : writeFile(join(workspace, params.path!), params.content!).then(() => ({ ok: true }));

  /** One call: its latency (ms). Fails unless the plugin allowed it. */
  async function once(tier: Tier, path: Path): Promise<number> {
    const id = `call_${randomUUID()}`;
    const params: Record<string, string> =
      tier === 'no-judge' ? { path: 'notes.txt' } : { path: `out-${id}.txt`, content: `written by ${id}\n` };
    const event = { toolName: tier === 'no-judge' ? 'read' : 'write', params, toolCallId: id };
    const ctx = { agentId: 'main', sessionId: 'bench-session', sessionKey: 'agent:main:main', toolCallId: id };
    const start = performance.now();
    if (path === 'plugin') {
      const answer = (await before(event, ctx)) as { block?: boolean; blockReason?: string } | undefined;
      if (answer?.block) throw new Error(`bench: ${tier} was blocked: ${answer.blockReason}`);
    }
    const result = await perform(tier, params);
    const ms = performance.now() - start;
    if (path === 'plugin') await after({ ...event, result }, ctx);
    return ms;
  }

  const samples = new Map<string, number[]>();
  const add = (key: string, ms: number) => samples.set(key, [...(samples.get(key) ?? []), ms]);
  try {
    for (const tier of ['no-judge', 'lightweight'] as const) {
      const n = tier === 'no-judge' ? READ_N : WRITE_N;
      for (let round = 0; round < WARMUP + n; round++) {
        for (const path of rotated(PATHS, round)) {
          const ms = await once(tier, path);
          if (round >= WARMUP) add(`${tier}|${path}`, ms);
        }
      }
    }
  } finally {
    await gate.close();
    await system.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  const rows: Row[] = [];
  for (const tier of ['no-judge', 'lightweight'] as const) {
    const judged = samples.get(`${tier}|plugin`) ?? [];
    const plain = samples.get(`${tier}|no plugin`) ?? [];
    const added = (q: number) => {
      const d = percentileOf(judged, q) - percentileOf(plain, q);
      return `${d >= 0 ? '+' : ''}${d.toFixed(2)}`;
    };
    const tool = tier === 'no-judge' ? 'read' : 'write';
    rows.push(summarize(`${tier}: ${tool}, no plugin`, plain, 'the file operation alone'));
    rows.push(summarize(`${tier}: ${tool}, agent-judge plugin`, judged, `${added(50)} p50 / ${added(95)} p95`));
  }
  return rows;
}
