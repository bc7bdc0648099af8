/**
 * Task-queue fairness between agents (issue 38), measured: `npm run bench:fairness` starts two in-memory dev servers,
 * one with Temporal's fairness off (`matching.enableFairness=false`, the stock matcher) and one with it on (the
 * dev server's default: `matching.enableFairness` and `matching.useNewMatcher`), each with the real workers
 * and the gate service (`/v1/proposals`, one bearer token per agent), and measures a second agent's lightweight
 * proposals (POST -> settled answer, one at a time) with no flood and while a first agent floods 300 proposals:
 *
 * - `human-only`: 300 human-only proposals, 20 in flight (the docs/security.md setup, 111 -> 978 ms p95): most are
 *   refused by the per-agent limits, the rest wait for a person;
 * - `judged`: 300 full-judge proposals sent at once to a loopback Ollama-API model that takes `BENCH_FAIRNESS_JUDGE_MS`
 *   (default 4000) per answer (REJECT: nothing runs), so the judge worker's 100 activity slots are full and the
 *   rest wait in the judge task queue, where the second agent's rule check waits too.
 *
 * Rows are interleaved: each round runs off and on in turn (the order alternates), the flooding agent is new each
 * time (its limits start empty). The policy is the default one with `limits.proposals.perAgent` raised to 1000 per
 * minute, so the judged flood is admitted whole; the pending-escalation cap (20) is the default. Loopback only.
 * BENCH_FAIRNESS_ROUNDS (default 2), BENCH_FAIRNESS_QUIET (second agent's proposals per no-flood row and round,
 * default 25), BENCH_FAIRNESS_FLOOD (default 300); BENCH_FAIRNESS_ON='{"matching.useNewMatcher":false}' adds dynamic
 * config to the "on" server (that one gives the first measurement of docs/performance.md §7).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import pino from 'pino';
import { createLogger } from '../src/cli/shared';
import { devServerDynamicConfig, startDevServer, type DevServer } from '../src/devserver/server';
import { findTemporalCli } from '../src/devserver/temporal-cli';
import { newAgentToken, tokenSha256 } from '../src/gate/http-auth';
import { HookGateServer } from '../src/hooks/gate-server';
import { createJudgeDepsFromEnv } from '../src/judge';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess, type InProcessWorkers } from '../src/worker';
import { WORKFLOW_BUNDLER_OPTIONS, WORKFLOWS_PATH } from '../src/workflow-code';
import { answerJson, startFakeOllama } from '../test/helpers/fake-ollama';
import { machineHeader, pool, printTable, summarize, type Row } from './lib';

const ROUNDS = Number(process.env.BENCH_FAIRNESS_ROUNDS ?? 2);
const QUIET = Number(process.env.BENCH_FAIRNESS_QUIET ?? 25);
const FLOOD = Number(process.env.BENCH_FAIRNESS_FLOOD ?? 300);
const JUDGE_MS = Number(process.env.BENCH_FAIRNESS_JUDGE_MS ?? 4000);
const HUMAN_IN_FLIGHT = 20;
const MODES = ['off', 'on'] as const;
type Mode = (typeof MODES)[number];
type Flood = 'human-only' | 'judged';
const FLOODS: readonly Flood[] = ['human-only', 'judged'];
const QUIET_AGENT = '@quiet';
/** One new flooding agent per flood (its limits start empty), each with a token. */
const FLOOD_AGENTS = Array.from({ length: ROUNDS * FLOODS.length * MODES.length }, (_, i) => `@flood-${i}`);

interface Rig {
  mode: Mode;
  server: DevServer;
  system: InProcessWorkers;
  gate: HookGateServer;
  url: string;
  stop(): Promise<void>;
}

const tokens = Object.fromEntries([QUIET_AGENT, ...FLOOD_AGENTS].map((a) => [a, newAgentToken()]));

function proposal(kind: 'note' | 'payment' | 'exec'): Record<string, unknown> {
  const id = randomUUID();
  const shape: Record<string, unknown> = {
    note: {
      action_type: 'vault_note_create',
      target: { vault: 'main', path: `notes/b-${id}.md` },
      parameters: { content: '# bench' },
    },
    payment: { action_type: 'financial_op', target: { account: 'ops' }, parameters: { amount: 1, currency: 'EUR' } },
    exec: { action_type: 'exec', target: { host: 'local' }, parameters: { command: ['echo', id] } },
  }[kind];
  return {
    proposal_id: id,
    justification: `bench ${id}`,
    cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/1' }],
    ...shape,
  };
}

/** POST /v1/proposals as `agent`: the HTTP status, the proposal's status, and the milliseconds it took. */
async function post(rig: Rig, agent: string, body: unknown): Promise<{ ms: number; http: number; status: string }> {
  const start = performance.now();
  const res = await fetch(`${rig.url}/v1/proposals?wait_ms=60000`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[agent]}` },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { status?: string };
  return { ms: performance.now() - start, http: res.status, status: json.status ?? `http ${res.status}` };
}

/** One lightweight proposal of the quiet agent, timed; it must settle approved (or executed). */
async function quietOnce(rig: Rig): Promise<number> {
  const r = await post(rig, QUIET_AGENT, proposal('note'));
  if (r.http !== 200 || !['approved', 'executed'].includes(r.status))
    throw new Error(`bench fairness: the quiet agent's proposal answered ${r.http} ${r.status}`);
  return r.ms;
}

async function startRig(
  mode: Mode,
  cliPath: string,
  judgeHost: string,
  workflowBundle: { code: string },
  dir: string,
): Promise<Rig> {
  const extra =
    mode === 'on' && process.env.BENCH_FAIRNESS_ON ? (JSON.parse(process.env.BENCH_FAIRNESS_ON) as object) : {};
  // Off: the stock matcher, as before issue 38 (`matching.enableFairness` is false by default; set here to be plain).
  const dynamicConfig = {
    ...devServerDynamicConfig(mode === 'on'),
    'matching.enableFairness': mode === 'on',
    ...extra,
  };
  const server = await startDevServer({ cliPath, headless: true, dynamicConfig, readyTimeoutMs: 90_000 });
  console.log(`# fairness ${mode}: ${server.address}, dynamic config ${JSON.stringify(dynamicConfig)}`);
  const baseDir = join(dir, mode);
  const policy = defaultPolicyWith(
    {
      judge: {
        withoutModel: 'escalate',
        apiKeyEnv: 'OLLAMA_API_KEY',
        timeoutMs: 20_000,
        seed: 0,
        allowedEvidenceHosts: [],
        model: 'bench',
        host: judgeHost,
      },
      limits: { proposals: { perAgent: 1000, window: '1m' }, pendingEscalationsPerAgent: 20, httpSessionsPerAgent: 8 },
    },
    { baseDir },
  );
  const queues = taskQueuesFor(`bench-fairness-${mode}-${randomUUID()}`);
  const system = await startWorkersInProcess(server.address, {
    namespace: server.namespace,
    taskQueues: queues,
    policy,
    logger: pino({ level: 'silent' }),
    baseDir,
    workflowBundle,
    judge: createJudgeDepsFromEnv(policy, {}),
  });
  const gate = new HookGateServer({
    host: '127.0.0.1',
    port: 0,
    policy: system.policy,
    agents: Object.entries(tokens).map(([agent, token]) => ({ agent, tokenSha256: tokenSha256(token) })),
    temporal: { client: system.client, taskQueue: queues.workflow },
    baseDir,
    auditLog: join(dir, `${mode}-audit.jsonl`),
    logger: pino({ level: 'silent' }),
  });
  const url = await gate.start();
  return {
    mode,
    server,
    system,
    gate,
    url,
    async stop() {
      await gate.close();
      await system.stop();
      await server.stop();
    },
  };
}

/**
 * `agent` floods `rig` with {@link FLOOD} proposals of `kind` while the quiet agent sends its own one at a time; the
 * quiet agent's samples are those that ended before the flood's last answer came back.
 */
async function flooded(rig: Rig, agent: string, kind: Flood): Promise<{ samples: number[]; note: string }> {
  const counts: Record<string, number> = {};
  const started = performance.now();
  const run = pool(
    Array.from({ length: FLOOD }, (_, i) => i),
    kind === 'human-only' ? HUMAN_IN_FLIGHT : FLOOD,
    async () => {
      const r = await post(rig, agent, proposal(kind === 'human-only' ? 'payment' : 'exec'));
      const key = r.http === 429 ? 'refused' : r.status;
      counts[key] = (counts[key] ?? 0) + 1;
    },
  );
  let done = false;
  let floodMs = 0;
  const finished = run.finally(() => {
    done = true;
    floodMs = performance.now() - started;
  });
  const samples: number[] = [];
  while (!done) {
    const ms = await quietOnce(rig);
    if (!done) samples.push(ms);
  }
  await finished;
  const what = Object.entries(counts)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
  return { samples, note: `${what} in ${(floodMs / 1000).toFixed(1)} s` };
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const cliPath = findTemporalCli({ logger: createLogger() });
  console.log(`# agent-judge bench: fairness between agents (issue 38), ${new Date().toISOString()}`);
  for (const line of machineHeader(cliPath)) console.log(`# ${line}`);
  console.log(
    `# ${ROUNDS} rounds; quiet agent ${QUIET} per no-flood row and round; floods of ${FLOOD} ` +
      `(human-only ${HUMAN_IN_FLIGHT} in flight; judged all at once, model ${JUDGE_MS} ms)`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-fairness-'));
  const judge = await startFakeOllama({
    respond: () => ({ content: answerJson('REJECT', 0.95, 'bench flood'), delayMs: JUDGE_MS }),
  });
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => console.error(m) },
    ...WORKFLOW_BUNDLER_OPTIONS,
  });
  const rigs: Rig[] = [];
  try {
    for (const mode of MODES) rigs.push(await startRig(mode, cliPath, judge.host, workflowBundle, dir));
    for (const rig of rigs) for (let i = 0; i < 10; i++) await quietOnce(rig); // warm-up
    const samples = new Map<string, number[]>();
    const notes = new Map<string, string[]>();
    const add = (key: string, s: number[], note?: string) => {
      samples.set(key, [...(samples.get(key) ?? []), ...s]);
      if (note) notes.set(key, [...(notes.get(key) ?? []), note]);
    };
    let nextAgent = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? rigs : [...rigs].reverse();
      for (const rig of order) {
        const quiet: number[] = [];
        for (let i = 0; i < QUIET; i++) quiet.push(await quietOnce(rig));
        add(`${rig.mode}|none`, quiet);
      }
      for (const kind of FLOODS) {
        for (const rig of order) {
          const f = await flooded(rig, FLOOD_AGENTS[nextAgent++]!, kind);
          add(`${rig.mode}|${kind}`, f.samples, f.note);
          console.log(
            `# round ${round + 1}, fairness ${rig.mode}, ${kind} flood: ${f.note}; quiet n=${f.samples.length}`,
          );
        }
      }
    }
    const rows: Row[] = [];
    for (const kind of ['none', ...FLOODS] as const) {
      for (const mode of MODES) {
        const s = samples.get(`${mode}|${kind}`) ?? [];
        const row = summarize(`fairness ${mode}, ${kind === 'none' ? 'no flood' : `${kind} flood`}`, s);
        const base = summarize('', samples.get(`${mode}|none`) ?? []);
        const ratio = (q: 'p50' | 'p95') => ((row[q] ?? 0) / (base[q] ?? 1)).toFixed(2);
        row.note =
          kind === 'none'
            ? ''
            : `p50 ${ratio('p50')}x, p95 ${ratio('p95')}x no flood; ${notes.get(`${mode}|${kind}`)?.join(' / ')}`;
        rows.push(row);
      }
    }
    printTable(
      "Fairness between agents (issue 38): a second agent's lightweight proposals through the gate service, " +
        'POST /v1/proposals -> settled answer, ms',
      rows,
    );
  } finally {
    for (const rig of rigs) await rig.stop().catch(() => undefined);
    await judge.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
