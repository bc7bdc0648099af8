/**
 * Crash recovery figures (issue 9 §1): N proposals in flight when the executor worker (a real
 * `agent-judge worker --role executor` process) is killed with SIGKILL: time from its restart to
 * every proposal final, and how many ran twice or were lost. Half are slow execs running when the
 * kill comes, half memory writes submitted while no executor runs. The policy's default heartbeat
 * timeout (10 s) applies. Needs a built dist/ (`npm run build`).
 *
 *   node --import tsx bench/faults.ts          # BENCH_FAULT_N (default 20), BENCH_FAULT_RUNS (default 5)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import pino from 'pino';
import { submitProposal } from '../src/client/proposals';
import type { ProposalOutcome } from '../src/contracts/status';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { WORKFLOWS_PATH } from '../src/workflow-code';
import { summarize, type Row } from './lib';

const N = Number(process.env.BENCH_FAULT_N ?? 20);
const RUNS = Number(process.env.BENCH_FAULT_RUNS ?? 5);
const EXEC_SECONDS = 8;
/** A proposal not final this long after the restart counts as lost. */
const LOST_AFTER_MS = 180_000;
const BIN = fileURLToPath(new URL('../bin/agent-judge.mjs', import.meta.url));

function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** The executor worker as its own process; resolves once it polls. */
function startExecutor(
  opts: { address: string; namespace: string },
  policyFile: string,
  prefix: string,
  cwd: string,
): { child: ChildProcess; ready: Promise<void> } {
  const child = spawn(
    process.execPath,
    [BIN, 'worker', '--role', 'executor', '--policy', policyFile, '--task-queue-prefix', prefix],
    {
      cwd,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: opts.address,
        TEMPORAL_NAMESPACE: opts.namespace,
        AGENT_JUDGE_POLICY: '',
        LOG_FORMAT: 'json',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let text = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (c: Buffer) => {
      text += c.toString('utf8');
      if (text.includes('workers running')) resolve();
    });
    child.once('exit', (code, sig) => reject(new Error(`executor exited: ${code ?? sig}\n${text.slice(-1000)}`)));
  });
  ready.catch(() => {});
  return { child, ready };
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

export async function benchFaults(opts: { address: string; namespace: string }): Promise<Row[]> {
  const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-faults-'));
  const base = defaultPolicyWith({}, { baseDir });
  // Rules-only approvals (no model here); `sh` so an exec takes a while and leaves a trace.
  const policy = defaultPolicyWith(
    {
      judge: { withoutModel: 'approve' },
      exec: { allowlist: [...base.spec.exec.allowlist, { command: 'sh', pathArgs: false }] },
    },
    { baseDir },
  );
  const policyFile = join(baseDir, 'policy.yaml');
  writeFileSync(policyFile, JSON.stringify(policy));
  const queues = taskQueuesFor(`bench-faults-${randomUUID()}`);
  const system = await startWorkersInProcess(opts.address, {
    namespace: opts.namespace,
    taskQueues: queues,
    policy,
    roles: ['workflow', 'judge'],
    logger: pino({ level: 'silent' }),
    baseDir,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: silentBundler }),
  });
  const { client } = system;
  const submit = async (p: Record<string, unknown>) =>
    (await submitProposal(client, p, { taskQueue: queues.workflow })).workflow_id;
  const recoveries: number[] = [];
  let twice = 0;
  let lost = 0;
  let executed = 0;
  let uncertain = 0;
  try {
    for (let run = 0; run < RUNS; run++) {
      const trace = join(baseDir, `trace-${run}`);
      const startedLog = join(trace, 'started.log');
      const store = `bench-faults-${run}`;
      const first = startExecutor(opts, policyFile, queues.workflow, baseDir);
      await first.ready;
      const execCount = Math.ceil(N / 2);
      const tags = Array.from({ length: execCount }, () => randomUUID().slice(0, 8));
      const execs = await Promise.all(
        tags.map((tag) =>
          submit({
            ...shape('exec'),
            parameters: {
              command: ['sh', '-c', `mkdir -p '${trace}'; echo ${tag} >> '${startedLog}'; sleep ${EXEC_SECONDS}`],
            },
          }),
        ),
      );
      while (lines(startedLog).length < execCount) await new Promise((r) => setTimeout(r, 50));
      await kill(first.child);
      const memories = await Promise.all(
        Array.from({ length: N - execCount }, (_, i) =>
          submit({ ...shape('memory_write'), target: { store }, parameters: { content: `run ${run} write ${i}` } }),
        ),
      );
      const restartAt = performance.now();
      const second = startExecutor(opts, policyFile, queues.workflow, baseDir);
      const ids = [...execs, ...memories];
      const outcomes = await Promise.all(
        ids.map((id) =>
          Promise.race([
            client.workflow.getHandle(id).result() as Promise<ProposalOutcome>,
            new Promise<null>((r) => setTimeout(() => r(null), LOST_AFTER_MS)),
          ]),
        ),
      );
      recoveries.push(performance.now() - restartAt);
      const starts = new Map<string, number>();
      for (const t of lines(startedLog)) starts.set(t, (starts.get(t) ?? 0) + 1);
      twice += [...starts.values()].filter((c) => c > 1).length;
      const mem = new Map<string, number>();
      for (const l of lines(join(policy.spec.memory.dir, `${store}.jsonl`))) {
        const id = (JSON.parse(l) as { workflow_id: string }).workflow_id;
        mem.set(id, (mem.get(id) ?? 0) + 1);
      }
      twice += memories.filter((id) => (mem.get(id) ?? 0) > 1).length;
      lost += outcomes.filter((o) => o === null).length;
      lost += memories.filter((id, i) => outcomes[execCount + i]?.status === 'executed' && !mem.get(id)).length;
      executed += outcomes.filter((o) => o?.status === 'executed').length;
      uncertain += outcomes.filter((o) => o?.status === 'uncertain').length;
      await kill(second.child);
    }
  } finally {
    await system.stop();
    rmSync(baseDir, { recursive: true, force: true });
  }
  const row = summarize(
    `executor killed with ${N} in flight: restart -> all final`,
    recoveries,
    `${RUNS} runs; run twice ${twice}, lost ${lost}; ${executed} executed, ${uncertain} uncertain`,
  );
  const max = Math.max(...recoveries);
  return [{ ...row, note: `${row.note ?? ''}; max ${max.toFixed(0)} ms` }];
}

function shape(type: 'exec' | 'memory_write'): Record<string, unknown> {
  const id = randomUUID();
  return {
    proposal_id: id,
    agent_id: '@bench',
    action_type: type,
    justification: `bench faults ${id}`,
    cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/1' }],
    target: type === 'exec' ? { host: 'local' } : { store: 'bench' },
  };
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

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { runAlone } = await import('./lib');
  await runAlone('Crash recovery: executor killed mid-flight (issue 9)', benchFaults);
}
