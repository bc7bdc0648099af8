/**
 * Judge figures for `npm run bench`: what the judge itself costs around the model. The model is a
 * loopback Ollama-API server that answers at once, so the numbers are rules + evidence + prompt +
 * HTTP + validation + combination, i.e. everything the seed's 2 s p95 budget must not spend.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { submitProposal } from '../src/client/proposals';
import type { CompliancePolicy } from '../src/contracts/policy';
import type { Proposal } from '../src/contracts/proposal';
import { createJudgeDepsFromEnv, judgeProposal, type JudgeDeps, type JudgeInput } from '../src/judge';
import { taskQueuesFor } from '../src/names';
import { loadPolicy } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { answerJson, startFakeOllama } from '../test/helpers/fake-ollama';
import { summarize, timed, type Row } from './lib';
import { closedOutcome } from './capabilities';

const CALLS = 300;
const WARMUP = 30;
const E2E_N = Number(process.env.BENCH_N ?? 200);

/**
 * Submit -> final verdict through Temporal for a full-judge-review proposal whose judge asks the
 * (instant) model: workflow worker, judge worker and executor worker as in production.
 */
async function endToEnd(
  server: { address: string; namespace: string },
  policy: CompliancePolicy,
  baseDir: string,
  proposal: Proposal,
): Promise<Row> {
  const queues = taskQueuesFor(`bench-judge-${randomUUID()}`);
  const system = await startWorkersInProcess(server.address, {
    namespace: server.namespace,
    taskQueues: queues,
    policy,
    logger: pino({ level: 'silent' }),
    baseDir,
    judge: createJudgeDepsFromEnv(policy, {}),
  });
  const { client } = system;
  try {
    const samples: number[] = [];
    for (let i = 0; i < E2E_N + 10; i++) {
      // A new id and justification each time: identical proposals are refused as duplicates.
      const p = {
        ...proposal,
        proposal_id: `bench-${randomUUID()}`,
        justification: `${proposal.justification} (run ${i})`,
      };
      const [ms, out] = await timed(async () => {
        const { workflow_id } = await submitProposal(client, p, { taskQueue: queues.workflow });
        // An approved PR is performed by the caller: its run closes once the token is redeemed.
        return closedOutcome(client, workflow_id);
      });
      if (out.verdict?.decided_by !== 'judge')
        throw new Error(`bench: expected a judge verdict, got ${JSON.stringify(out.verdict)}`);
      if (i >= 10) samples.push(ms);
    }
    return summarize(
      'judge: submit -> final verdict via Temporal (instant model)',
      samples,
      'workflow + judge worker + loopback model',
    );
  } finally {
    await system.stop();
  }
}

/** Judge rows; with a Temporal server, also the end-to-end decision latency through the workflow. */
export async function benchJudge(server?: { address: string; namespace: string }): Promise<Row[]> {
  const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-judge-'));
  const fake = await startFakeOllama({
    respond: () => ({ content: answerJson('APPROVE', 0.9, 'fits the cited issue') }),
  });
  try {
    const policy = await loadPolicy({ baseDir, env: {} });
    policy.spec.judge = {
      withoutModel: 'approve',
      apiKeyEnv: 'OLLAMA_API_KEY',
      timeoutMs: 5_000,
      seed: 0,
      allowedEvidenceHosts: ['forge.example.test'],
      model: 'bench',
      host: fake.host,
    };
    const input: JudgeInput = {
      tier: 'full-judge-review',
      round: 0,
      policy,
      proposal: {
        proposal_id: 'bench-1',
        agent_id: '@engineering',
        action_type: 'forgejo_pr_create',
        target: { repo: 'sscoble/speckl', branch: 'feat/add-schema-validation', base: 'main' },
        parameters: { files_changed: ['src/schema/validator.ts', 'src/schema/types.ts'], estimated_diff_lines: 45 },
        justification: 'Implementing OpenAPI schema validation per issue #42',
        cited_evidence: [
          { type: 'issue', url: 'https://forge.example.test/sscoble/speckl/issues/42' },
          { type: 'task_assignment', source: '@cos dispatch #789' },
        ],
        scope_claim: { files_only: ['src/schema/'], max_lines: 80, no_existing_code_deletion: true },
      },
    };
    const withModel: JudgeDeps = { baseDir, ...createJudgeDepsFromEnv(policy, {}) };
    const rulesOnly: JudgeDeps = { baseDir };

    const total: number[] = [];
    const overhead: number[] = [];
    const rules: number[] = [];
    for (let i = 0; i < WARMUP + CALLS; i++) {
      const start = performance.now();
      const v = await judgeProposal(input, withModel);
      const ms = performance.now() - start;
      if (v.decided_by !== 'judge' || v.judge?.error) throw new Error(`bench: unexpected verdict ${JSON.stringify(v)}`);
      if (i < WARMUP) continue;
      total.push(ms);
      overhead.push(Math.max(0, ms - (v.judge?.latency_ms ?? 0)));
    }
    for (let i = 0; i < WARMUP + CALLS; i++) {
      const start = performance.now();
      await judgeProposal(input, rulesOnly);
      if (i >= WARMUP) rules.push(performance.now() - start);
    }
    const p95 = summarize('', overhead).p95 ?? Number.NaN;
    const rows = [
      summarize('judge: overhead excluding model time', overhead, `target p95 < 50 ms: ${p95 < 50 ? 'met' : 'MISSED'}`),
      summarize('judge: judgeProposal, instant loopback model', total, 'incl. Ollama HTTP round trip + validation'),
      summarize('judge: judgeProposal, rules only', rules),
    ];
    if (server) rows.push(await endToEnd(server, policy, baseDir, input.proposal));
    return rows;
  } finally {
    fake.assertDone();
    await fake.close();
  }
}

// Run on its own: `node --import tsx bench/judge.ts`.
if (process.argv[1] && /bench[/\\]judge\.ts$/.test(process.argv[1])) {
  const { printTable } = await import('./lib');
  printTable('judge', await benchJudge());
}
