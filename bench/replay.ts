/**
 * Replay figures (issue 41): recorded proposals replayed per second with rules only (target: 1,000 in under 30 s) and
 * with a scripted candidate model (a loopback Ollama API answering at once, so the figure is the replay's own cost),
 * over a scripted coding-agent week (bench/coding-week.ts) recorded on the dev server under the default policy, people
 * deciding what reaches them. The rules-only candidate widens the shell allowlist (npm, npx, make): docs/replay.md's
 * worked example, whose report this prints once (BENCH_REPLAY_REPORT=1).
 *
 * Standalone: `node --import tsx bench/replay.ts` starts its own dev server. BENCH_REPLAY_N proposals (default 1,000),
 * BENCH_REPLAY_RUNS interleaved rounds (default 3).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { bundleWorkflowCode } from '@temporalio/worker';
import pino from 'pino';
import { redeemCapability } from '../src/client/capabilities';
import { decide, getStatus, submitAndWait } from '../src/client/proposals';
import type { ProposalOutcome } from '../src/contracts/status';
import { createOllamaModel } from '../src/judge/model';
import { PROPOSAL_WORKFLOW_TYPE, taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { recordedProposals, type RecordedProposal } from '../src/replay/history';
import { renderText } from '../src/replay/render';
import { replay, type ReplayOptions } from '../src/replay/run';
import { startWorkersInProcess } from '../src/worker';
import { WORKFLOWS_PATH } from '../src/workflow-code';
import { answerJson, startFakeOllama } from '../test/helpers/fake-ollama';
import { codingWeek } from './coding-week';
import { pool, runAlone, summarize, timed, type BenchServer, type Row } from './lib';

const N = Number(process.env.BENCH_REPLAY_N ?? 1000);
const RUNS = Number(process.env.BENCH_REPLAY_RUNS ?? 3);
const silentBundler = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** The shell commands the candidate adds to the default allowlist. */
export const WIDER_SHELL = [
  { command: 'npm', operands: 'text' as const },
  { command: 'npx', operands: 'text' as const },
  { command: 'make', operands: 'text' as const },
];

/** Recorded proposals already in memory, as the replay reads them (the decide-only figure). */
async function* fromArray(items: readonly RecordedProposal[]): AsyncGenerator<RecordedProposal> {
  for (const i of items) yield await Promise.resolve(i);
}

/** A call retried while the workflow task it needs is failing (a loaded machine times tasks out; they are retried). */
async function retried<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const failedTask = /Workflow Task in failed state/.test(String((err as { cause?: unknown }).cause ?? err));
      if (!failedTask || attempt >= 10) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

export async function benchReplay(server: BenchServer): Promise<Row[]> {
  const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-replay-'));
  const cwd = join(baseDir, 'app');
  mkdirSync(cwd);
  const taskQueues = taskQueuesFor(`bench-replay-${randomUUID()}`);
  const recordedPolicy = defaultPolicyWith(
    {
      escalation: { timeout: '1h', approvers: ['scott'], reminderAt: 0 },
      limits: { proposals: { perAgent: 1_000_000, window: '1m' }, pendingEscalationsPerAgent: 10_000 },
    },
    { baseDir, env: {} },
  );
  const system = await startWorkersInProcess(server.address, {
    namespace: server.namespace,
    taskQueues,
    policy: recordedPolicy,
    logger: pino({ level: 'silent' }),
    baseDir,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: silentBundler }),
  });
  const client = system.client;
  const perform = async (outcome: ProposalOutcome) => {
    if (!outcome.capability || outcome.capability.redemption) return;
    const { proposal } = await getStatus(client, outcome.workflow_id);
    await redeemCapability(client, {
      token: outcome.capability.token,
      action: proposal,
      issuers: system.policy.spec.capabilities.issuers,
      redeemer: 'bench',
    });
  };
  try {
    const week = codingWeek(N, cwd);
    const ids = week.map((w) => String(w.proposal.proposal_id));
    const [recordMs] = await timed(() =>
      pool(week, 10, async (w) => {
        const outcome = await submitAndWait(client, w.proposal, { taskQueue: taskQueues.workflow });
        if (outcome.status === 'awaiting_human') {
          const id = String(w.proposal.proposal_id);
          const decision = { decision: w.person, approver: 'scott', reason: 'scripted person' } as const;
          await perform(await retried(() => decide(client, id, decision)));
        } else await perform(outcome);
      }),
    );
    const query =
      `WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}' AND ExecutionStatus != 'Running'` +
      ` AND TaskQueue = '${taskQueues.workflow}'`;
    while ((await client.workflow.count(query)).count < N) await new Promise((r) => setTimeout(r, 200));

    const hooks = recordedPolicy.spec.hooks;
    const wider = defaultPolicyWith(
      {
        escalation: recordedPolicy.spec.escalation,
        hooks: { ...hooks, shell: { ...hooks.shell, allow: [...hooks.shell.allow, ...WIDER_SHELL] } },
      },
      { baseDir, env: {} },
    );
    const selection = { sinceMs: 3_600_000, ids };
    const common: Pick<ReplayOptions, 'recordedThresholds' | 'windowMs'> = {
      recordedThresholds: recordedPolicy.spec.thresholds,
      windowMs: 7 * 86_400_000,
    };
    const fake = await startFakeOllama({ respond: () => ({ content: answerJson('APPROVE', 0.9, 'scripted') }) });
    const model = createOllamaModel({ model: 'scripted-judge', host: fake.host });
    const recorded: RecordedProposal[] = [];
    for await (const p of recordedProposals(client, selection)) recorded.push(p);

    const rules: number[] = [];
    const decideOnly: number[] = [];
    const withModel: number[] = [];
    let calls = 0;
    let report = '';
    try {
      for (let round = 0; round < RUNS; round++) {
        const [ms, result] = await timed(() =>
          replay(recordedProposals(client, selection), { ...common, candidate: { policy: wider, baseDir } }),
        );
        rules.push(ms);
        if (round === 0) {
          report = renderText(result, {
            candidate: 'the default policy + npm, npx, make on spec.hooks.shell.allow',
            recorded: 'the default policy (scott decides escalations)',
            window: `a scripted week of ${N} coding-agent proposals`,
          });
        }
        decideOnly.push(
          (await timed(() => replay(fromArray(recorded), { ...common, candidate: { policy: wider, baseDir } })))[0],
        );
        const before = fake.calls.length;
        withModel.push(
          (
            await timed(() =>
              replay(recordedProposals(client, selection), {
                ...common,
                candidate: { policy: recordedPolicy, baseDir },
                model: { client: model },
                confirm: () => Promise.resolve(true),
              }),
            )
          )[0],
        );
        calls = fake.calls.length - before;
      }
    } finally {
      await fake.close();
    }
    if (process.env.BENCH_REPLAY_REPORT === '1') console.log(`\n${report}`);
    const rate = (xs: number[]) =>
      `${Math.round((N / [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!) * 1000)}/s`;
    return [
      {
        name: `record the scripted week: ${N} proposals, people deciding escalations`,
        n: 1,
        p50: recordMs,
        note: '10 in flight',
      },
      summarize(`replay ${N}, rules only (read from the server + decide)`, rules, `${rate(rules)}; target < 30 s`),
      summarize(`replay ${N}, rules only, decide only (histories in memory)`, decideOnly, rate(decideOnly)),
      summarize(
        `replay ${N}, scripted candidate model (read + probe + model calls)`,
        withModel,
        `${rate(withModel)}; ${calls} model calls per run`,
      ),
    ];
  } catch (err) {
    console.error('replay bench failed:', err);
    throw err;
  } finally {
    await system.stop();
    rmSync(baseDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await runAlone('Replay of recorded proposals (issue 41)', benchReplay);
}
