/**
 * The MCP proxy's overhead (issue 10), every row against its own reference in the same run, interleaved so all see
 * the same machine load:
 * - pass-through: the same `read_text_file` on @modelcontextprotocol/server-filesystem through `agent-judge mcp` (a
 *   no-judge rule: relay + one hash-chained audit line, no workflow) against the server called directly, by the same
 *   SDK client. Target: under 2 ms added at p95.
 * - judged: a lightweight call (`create_directory`, approved by the patterns) and a full-judge call on the rules
 *   (`write_file`, approved by the rules with no model) through the proxy, against the proposal workflow's own latency
 *   for the same proposal (what the proxy builds for that call) submitted directly with `submitAndWait`. Every call
 *   has arguments of its own, so each is one new proposal. Target: the proxy adds at most 20 %.
 * - the n-th identical call: an identical call after n-1 finished ones is a new proposal, the n-th (MAX_CALL_SEQUENCE
 *   in src/mcp/judged-call.ts); the running proxy remembers where they end, a just-started one walks them once. The
 *   cost of call 1, 10 and 50 of a chain, and of call 51 from a new proxy process.
 *
 * Sizes: BENCH_MCP_N judged calls per row (default 100), BENCH_MCP_CHAINS chains of 50 identical calls (default 5).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { bundleWorkflowCode } from '@temporalio/worker';
import pino from 'pino';
import { submitAndWait } from '../src/client/proposals';
import type { McpSettings } from '../src/contracts/mcp';
import { report } from '../src/mcp/judged-call';
import { mapCall, proposalForCall, type ToolCall } from '../src/mcp/mapping';
import { callDigest, toolDefinitionHash, type ToolDefinition } from '../src/mcp/tools';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { WORKFLOWS_PATH } from '../src/workflow-code';
import { percentileOf, rotated, summarize, type BenchServer, type Row } from './lib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FS_SERVER = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const N = 300;
const WARMUP = 30;
const JUDGED_N = Number(process.env.BENCH_MCP_N ?? 100);
const JUDGED_WARMUP = 10;
const CHAINS = Number(process.env.BENCH_MCP_CHAINS ?? 5);
const CHAIN_LENGTH = 50;
const NTH = [1, 10, 50];
/** The rules ask file writes for evidence; the agent cites its task. */
const AGENT_JUDGE = {
  justification: 'bench: write the report file',
  cited_evidence: [{ type: 'task', source: 'bench ticket 1' }],
};

async function connect(args: string[], cwd: string): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, cwd, stderr: 'ignore' }));
  return client;
}

type CallResult = { isError?: boolean; content?: Array<{ text?: string }> };

async function callOk(client: Client, name: string, args: Record<string, unknown>): Promise<void> {
  const r = (await client.callTool({ name, arguments: args })) as CallResult;
  if (r.isError) throw new Error(`bench: ${name} was not performed: ${r.content?.[0]?.text ?? ''}`);
}

const pct = percentileOf;

/** "+12 % p50 / +15 % p95": what the proxy adds to the direct reference. */
function added(proxied: readonly number[], direct: readonly number[]): { text: string; worst: number } {
  const a = (q: number) => (pct(proxied, q) / pct(direct, q) - 1) * 100;
  const sign = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(0)} %`;
  return {
    worst: Math.max(a(50), a(95)),
    text: `${sign(a(50))} p50 / ${sign(a(95))} p95 (+${(pct(proxied, 50) - pct(direct, 50)).toFixed(1)} ms p50)`,
  };
}

export async function benchMcp(server: BenchServer): Promise<Row[]> {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--if-stale'], { stdio: 'ignore' });
  const dir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-mcp-'));
  const workspace = join(dir, '.agent-judge/workspace');
  mkdirSync(workspace, { recursive: true });
  const base = defaultPolicyWith({}, { baseDir: dir });
  const mcp = {
    server: 'fs',
    holdFor: '30s',
    performWithin: '10m',
    rules: [
      { tool: 'read_*', tier: 'no-judge' },
      {
        name: 'fs.mkdir',
        tool: 'create_directory',
        actionType: 'workspace_mkdir',
        target: { path: '$.path' },
        parameters: {},
      },
      {
        name: 'fs.write',
        tool: 'write_file',
        actionType: 'file_write',
        target: { path: '$.path' },
        parameters: { content: '$.content', mode: 'overwrite' },
      },
    ],
  };
  // Full-judge calls are approved on the rules alone (no model): this bench's explicit choice, as in `proposals`.
  const spec = {
    judge: { withoutModel: 'approve' },
    riskMatrix: [
      ...base.spec.riskMatrix,
      { actionType: 'workspace_mkdir', surface: 'dirs', surfaceArea: 1, actionRisk: 1, tier: 'lightweight-approval' },
    ],
    mcp,
  };
  const queues = taskQueuesFor(`bench-mcp-${randomUUID()}`);
  const system = await startWorkersInProcess(server.address, {
    namespace: server.namespace,
    taskQueues: queues,
    policy: defaultPolicyWith(spec, { baseDir: dir }),
    logger: pino({ level: 'silent' }),
    baseDir: dir,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: silentBundler }),
  });
  const temporal = system.client;
  try {
    writeFileSync(join(dir, 'file.txt'), 'x'.repeat(1024));
    const policyFile = join(dir, 'policy.json');
    writeFileSync(policyFile, JSON.stringify(system.policy));
    const upstream = [FS_SERVER, dir];
    const direct = await connect(upstream, dir);
    const startProxy = () =>
      connect(
        [
          join(ROOT, 'bin/agent-judge.mjs'),
          'mcp',
          '--agent',
          '@bench',
          '--policy',
          policyFile,
          '--address',
          server.address,
          '--namespace',
          server.namespace,
          '--task-queue-prefix',
          queues.workflow,
          '--state-dir',
          join(dir, 'state'),
          '--',
          process.execPath,
          ...upstream,
        ],
        dir,
      );
    const proxied = await startProxy();
    try {
      const rows = await passThrough(direct, proxied, dir);
      const tools = (await direct.listTools()).tools as ToolDefinition[];
      rows.push(...(await judged(proxied, temporal, system.policy.spec.mcp, tools, queues.workflow, workspace)));
      rows.push(...(await identical(proxied, startProxy, workspace)));
      return rows;
    } finally {
      await proxied.close();
      await direct.close();
    }
  } finally {
    await system.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function passThrough(direct: Client, proxied: Client, dir: string): Promise<Row[]> {
  const args = { name: 'read_text_file', arguments: { path: join(dir, 'file.txt') } };
  const directMs: number[] = [];
  const proxiedMs: number[] = [];
  for (let i = 0; i < WARMUP + N; i++) {
    for (const [client, samples] of rotated(
      [
        [direct, directMs],
        [proxied, proxiedMs],
      ] as const,
      i,
    )) {
      const t0 = performance.now();
      await client.callTool(args);
      if (i >= WARMUP) samples.push(performance.now() - t0);
    }
  }
  const d = summarize('read_text_file, upstream directly', directMs);
  const p = summarize('read_text_file through agent-judge mcp (no-judge)', proxiedMs);
  const plus = (p.p95 ?? 0) - (d.p95 ?? 0);
  return [d, { ...p, note: `+${plus.toFixed(2)} ms at p95 (target < 2 ms: ${plus < 2 ? 'met' : 'NOT met'})` }];
}

/** Judged calls through the proxy against the same proposals submitted directly. */
async function judged(
  proxied: Client,
  temporal: Awaited<ReturnType<typeof startWorkersInProcess>>['client'],
  settings: McpSettings,
  tools: ToolDefinition[],
  taskQueue: string,
  workspace: string,
): Promise<Row[]> {
  const definition = (name: string) => {
    const t = tools.find((x) => x.name === name);
    if (!t) throw new Error(`bench: the upstream lists no ${name}`);
    return t;
  };
  /** The proposal the proxy builds for this call (sequence 0: a new call). */
  const proposalOf = (tool: string, args: Record<string, unknown>, agentJudge: Record<string, unknown>) => {
    const call: ToolCall = {
      server: 'fs',
      tool,
      toolDefinitionHash: toolDefinitionHash(definition(tool)),
      arguments: args,
    };
    const mapping = mapCall(settings, call);
    if (mapping.kind !== 'judged') throw new Error(`bench: ${tool} is not judged`);
    const p = proposalForCall({
      agentId: '@bench',
      call,
      callDigest: callDigest(call),
      mapping,
      agentJudge,
      sequence: 0,
    });
    if (!p.ok) throw new Error(`bench: ${p.refusal.reason}`);
    return p.value;
  };
  let seq = 0;
  const args = {
    lightweight: () => ({ path: join(workspace, `lw-${++seq}-${randomUUID()}`) }),
    full: () => ({ path: join(workspace, `full-${++seq}-${randomUUID()}.md`), content: '# bench\n' }),
  };
  /** Submit and wait for the decision; then (off the clock) close the run as a performer that gave up would. */
  const submitted = async (proposal: Record<string, unknown>): Promise<number> => {
    const t0 = performance.now();
    const out = await submitAndWait(temporal, proposal, { taskQueue });
    const ms = performance.now() - t0;
    if (out.status !== 'approved') throw new Error(`bench: expected approved, got ${out.status}`);
    await report(temporal, out.workflow_id, { outcome: 'abandoned', detail: 'bench: direct submission' });
    return ms;
  };
  const through = async (tool: string, a: Record<string, unknown>): Promise<number> => {
    const t0 = performance.now();
    await callOk(proxied, tool, a);
    return performance.now() - t0;
  };
  const kinds = [
    { key: 'lw-direct', run: () => submitted(proposalOf('create_directory', args.lightweight(), {})) },
    { key: 'lw-proxy', run: () => through('create_directory', args.lightweight()) },
    { key: 'full-direct', run: () => submitted(proposalOf('write_file', args.full(), AGENT_JUDGE)) },
    { key: 'full-proxy', run: () => through('write_file', { ...args.full(), _agent_judge: AGENT_JUDGE }) },
  ] as const;
  const samples = new Map<string, number[]>(kinds.map((k) => [k.key, []]));
  for (let i = 0; i < JUDGED_WARMUP + JUDGED_N; i++) {
    for (const kind of rotated(kinds, i)) {
      const ms = await kind.run();
      if (i >= JUDGED_WARMUP) samples.get(kind.key)!.push(ms);
    }
  }
  const s = (k: string) => samples.get(k)!;
  const lw = added(s('lw-proxy'), s('lw-direct'));
  const full = added(s('full-proxy'), s('full-direct'));
  // The target holds only if it holds at p50 and at p95.
  const verdict = (worst: number) => `target <= 20 %: ${worst <= 20 ? 'met' : 'NOT met'}`;
  return [
    summarize('lightweight (create_directory): proposal submitted directly (submitAndWait)', s('lw-direct')),
    summarize('the same call through agent-judge mcp, forwarded', s('lw-proxy'), `${lw.text}; ${verdict(lw.worst)}`),
    summarize('full-judge rules (write_file): proposal submitted directly', s('full-direct')),
    summarize(
      'the same call through agent-judge mcp, forwarded',
      s('full-proxy'),
      `${full.text}; ${verdict(full.worst)}`,
    ),
  ];
}

/**
 * The n-th identical call: the running proxy remembers where the call's finished proposals end, so call 1, 10 and 50
 * of a chain each look at one or two proposals; a proxy that has just started walks all the earlier ones once.
 */
async function identical(proxied: Client, fresh: () => Promise<Client>, workspace: string): Promise<Row[]> {
  const at = new Map<number, number[]>(NTH.map((n) => [n, []]));
  const chains: Array<Record<string, unknown>> = [];
  for (let c = 0; c < CHAINS; c++) {
    const args = { path: join(workspace, `same-${c}-${randomUUID()}`) };
    chains.push(args);
    for (let n = 1; n <= CHAIN_LENGTH; n++) {
      const t0 = performance.now();
      await callOk(proxied, 'create_directory', args);
      at.get(n)?.push(performance.now() - t0);
    }
  }
  const restarted: number[] = [];
  const newcomer = await fresh();
  try {
    for (const args of chains) {
      const t0 = performance.now();
      await callOk(newcomer, 'create_directory', args);
      restarted.push(performance.now() - t0);
    }
  } finally {
    await newcomer.close();
  }
  return [
    ...NTH.map((n) =>
      summarize(
        `identical lightweight call #${n}, same proxy (${n - 1} finished before it)`,
        at.get(n)!,
        `${CHAINS} chains`,
      ),
    ),
    summarize(
      `identical call #${CHAIN_LENGTH + 1} from a just-started proxy (walks ${CHAIN_LENGTH} finished proposals)`,
      restarted,
      `${CHAINS} chains; once per call and proxy process`,
    ),
  ];
}

const silentBundler = {
  log() {},
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error(m: string) {
    console.error(m);
  },
};
