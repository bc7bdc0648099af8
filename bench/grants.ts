/**
 * Scoped grants (issue 25): what looking grants up costs a proposal, and what using one costs. Three worker systems
 * on one dev server, each on its own task queue with 0, 10 and 1,000 live grants (real grant workflows, read into
 * each worker's index from visibility), get lightweight proposals interleaved round by round:
 * - a note the policy alone approves (the index is not consulted: a use is never spent on it);
 * - a note outside the topic rule, which the rules REJECT after consulting the index (all the grants are pattern
 *   grants of the same agent and action type that do not match: the worst case, each one compared);
 * - on the 10-grant system, a note one identical grant covers: approved by the grant (one `useGrant` Update).
 * Beside them, the index lookup alone (`LiveGrants.candidates`, in process) with 0, 10 and 1,000 grants.
 * `node --import tsx bench/grants.ts` alone, or section `grants` of `npm run bench`. BENCH_GRANTS_N sets the samples
 * per row (default 60). The approval-fatigue count below is section `fatigue` (`BENCH_ONLY=fatigue npm run bench`).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import pino from 'pino';
import { LiveGrants } from '../src/activities/live-grants';
import { createGrant, grantDefinitionFor } from '../src/client/grants';
import { decide, getStatus, submitAndWait } from '../src/client/proposals';
import { parseProposal } from '../src/contracts/proposal';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess, type InProcessWorkers } from '../src/worker';
import { WORKFLOW_BUNDLER_OPTIONS, WORKFLOWS_PATH } from '../src/workflow-code';
import { pool, rotated, runAlone, summarize, timed, type BenchServer, type Row } from './lib';

const N = Number(process.env.BENCH_GRANTS_N ?? 60);
const SIZES = [0, 10, 1000] as const;
const AGENT = '@engineering';

function note(path: string, justification = `bench ${randomUUID()}`): Record<string, unknown> {
  return {
    agent_id: AGENT,
    action_type: 'vault_note_create',
    justification,
    target: { vault: 'main', path },
    parameters: { content: '# bench' },
  };
}

export async function benchGrants(server: BenchServer): Promise<Row[]> {
  const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-grants-'));
  const policy = defaultPolicyWith(
    { escalation: { timeout: '1h', approvers: ['bench'] }, grants: { maxUses: 1000, maxLifetime: '8h' } },
    { baseDir },
  );
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => console.error(m) },
    ...WORKFLOW_BUNDLER_OPTIONS,
  });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });
  const logger = pino({ level: 'silent' });
  const systems: Array<{ size: number; queue: string; index: LiveGrants; workers: InProcessWorkers }> = [];
  try {
    for (const size of SIZES) {
      const queues = taskQueuesFor(`bench-grants-${size}-${randomUUID()}`);
      const index = new LiveGrants({ client, taskQueue: queues.workflow, logger });
      const workers = await startWorkersInProcess(server.address, {
        namespace: server.namespace,
        taskQueues: queues,
        policy,
        logger,
        baseDir,
        workflowBundle,
        grants: index,
      });
      systems.push({ size, queue: queues.workflow, index, workers });
    }

    // The grants: patterns of the same agent and action type that never match (another vault each).
    const seed = parseProposal({ ...note('notes/seed.md'), proposal_id: 'bench-seed' });
    const patternGrant = (i: number) =>
      grantDefinitionFor(
        { ...seed, target: { vault: `other-${i}`, path: 'notes/seed.md' } },
        { approver: 'bench', lifetimeMs: 3_600_000, maxUses: 1000, scope: { kind: 'pattern', same: ['target.vault'] } },
      );
    for (const s of systems) {
      const ids = Array.from({ length: s.size }, (_, i) => i);
      await pool(ids, 16, async (i) => {
        await createGrant(client, { definition: patternGrant(i) }, { taskQueue: s.queue });
      });
    }
    // One identical grant on the 10-grant system (its eleventh), for the covered row.
    const covered = note('archive/covered.md', 'bench: the note a grant covers');
    const ten = systems[1]!;
    const identical = grantDefinitionFor(parseProposal({ ...covered, proposal_id: 'bench-covered' }), {
      approver: 'bench',
      lifetimeMs: 3_600_000,
      maxUses: 1000,
      scope: { kind: 'identical' },
    });
    await createGrant(client, { definition: identical }, { taskQueue: ten.queue });
    for (const s of systems) await s.index.refresh();
    const indexed = systems.map((s) => s.index.size);

    const samples = new Map<string, number[]>();
    const add = (name: string, ms: number) => samples.set(name, [...(samples.get(name) ?? []), ms]);
    type Job = { name: string; queue: string; proposal: () => Record<string, unknown>; expect: string };
    const jobs: Job[] = [];
    for (const s of systems) {
      jobs.push({
        name: `policy alone approves (index skipped), ${s.size} live grants`,
        queue: s.queue,
        proposal: () => note(`notes/bench-${randomUUID()}.md`),
        expect: 'approved',
      });
      jobs.push({
        name: `rules REJECT after the index lookup, ${s.size} live grants`,
        queue: s.queue,
        proposal: () => note(`elsewhere/bench-${randomUUID()}.md`),
        expect: 'rejected',
      });
    }
    jobs.push({
      name: 'approved by a grant (one useGrant Update), 11 live grants',
      queue: ten.queue,
      // The same action each time (the grant covers it), another justification: another proposal.
      proposal: () => ({ ...covered, justification: `bench covered ${randomUUID()}` }),
      expect: 'approved',
    });
    const WARMUP = 5;
    for (let round = 0; round < N + WARMUP; round++) {
      for (const job of rotated(jobs, round)) {
        const [ms, out] = await timed(() => submitAndWait(client, job.proposal(), { taskQueue: job.queue }));
        if (out.status !== job.expect)
          throw new Error(`bench grants: ${job.name}: expected ${job.expect}, got ${out.status}`);
        if (job.name.startsWith('approved by a grant') && !out.verdict?.decided_by.startsWith('grant:'))
          throw new Error(`bench grants: the covered note was not approved by its grant (${out.verdict?.decided_by})`);
        if (round >= WARMUP) add(job.name, ms);
      }
    }

    // The lookup alone, in process, interleaved over the three indexes.
    const lookups = new Map<number, number[]>();
    const probe = parseProposal({ ...note('elsewhere/probe.md'), proposal_id: 'bench-probe' });
    for (let i = 0; i < 2000; i++) {
      for (const s of systems) {
        const t0 = performance.now();
        s.index.candidates(probe);
        const dt = performance.now() - t0;
        if (i >= 200) lookups.set(s.size, [...(lookups.get(s.size) ?? []), dt * 1000]);
      }
    }

    const rows: Row[] = jobs.map((j) => summarize(j.name, samples.get(j.name) ?? []));
    for (const s of systems)
      rows.push({
        ...summarize(`index lookup alone, ${s.size} live grants`, lookups.get(s.size) ?? []),
        unit: 'µs',
        note: 'in process',
      });
    rows.push({ name: `grants indexed per system: ${indexed.join(' / ')}`, n: 0 });
    return rows;
  } finally {
    for (const s of systems) s.index.stop();
    for (const s of systems) await s.workers.stop();
    await connection.close();
    rmSync(baseDir, { recursive: true, force: true });
  }
}

/**
 * The approval-fatigue figure: a scripted coding-agent session of 200 shell commands (the repeats a coding agent
 * makes: tests, status, diffs, lint, type checks, and 20 one-off commands), each a `shell_command` proposal that the
 * full judge without a model hands to a person. The scripted approver approves every escalation; with grants, it
 * also grants the identical command for an hour at its first escalation. Counted: the decisions people made.
 */
export async function benchApprovalFatigue(server: BenchServer): Promise<Row[]> {
  const repeated: Array<[string, number]> = [
    ['npm test', 60],
    ['git status --short', 40],
    ['git diff --stat', 30],
    ['npm run lint', 25],
    ['npx tsc --noEmit', 25],
  ];
  const session: string[] = [];
  for (const [command, times] of repeated) for (let i = 0; i < times; i++) session.push(command);
  for (let i = 0; i < 20; i++) session.push(`node scripts/task-${i}.mjs`);
  // A fixed shuffle (the same session in both runs): the repeats are spread through the session.
  let seed = 7;
  for (let i = session.length - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const j = seed % (i + 1);
    [session[i], session[j]] = [session[j]!, session[i]!];
  }
  const shell = (command: string) => ({
    agent_id: AGENT,
    action_type: 'shell_command',
    justification: `bench session call ${randomUUID()}`,
    cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/1' }],
    target: { cwd: '/srv/repo' },
    parameters: { command, parsed: { reducible: true, commands: [{ argv: command.split(' '), redirects: [] }] } },
  });
  const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-fatigue-'));
  const policy = defaultPolicyWith({ escalation: { timeout: '1h', approvers: ['scott'] } }, { baseDir });
  const logger = pino({ level: 'silent' });
  const rows: Row[] = [];
  for (const granting of [false, true]) {
    const queues = taskQueuesFor(`bench-fatigue-${randomUUID()}`);
    const connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection, namespace: server.namespace });
    const index = new LiveGrants({ client, taskQueue: queues.workflow, logger });
    const workers = await startWorkersInProcess(server.address, {
      namespace: server.namespace,
      taskQueues: queues,
      policy,
      logger,
      baseDir,
      grants: index,
    });
    let decisions = 0;
    let byGrant = 0;
    const started = performance.now();
    try {
      for (const command of session) {
        const out = await submitAndWait(client, shell(command), { taskQueue: queues.workflow });
        if (out.verdict?.decided_by.startsWith('grant:')) {
          byGrant += 1;
          continue;
        }
        if (out.status !== 'awaiting_human') throw new Error(`bench fatigue: ${command}: ${out.status}`);
        await decide(client, out.workflow_id, { decision: 'approve', approver: 'scott', via: 'cli' });
        decisions += 1;
        if (!granting) continue;
        const { proposal } = await getStatus(client, out.workflow_id);
        const definition = grantDefinitionFor(proposal, {
          approver: 'scott',
          lifetimeMs: 3_600_000,
          maxUses: 100,
          scope: { kind: 'identical' },
          originWorkflowId: out.workflow_id,
        });
        await createGrant(client, { definition }, { taskQueue: queues.workflow });
        // The index would see it within its refresh period; the bench reads it now so the count does not depend on it.
        await index.refresh();
      }
    } finally {
      index.stop();
      await workers.stop();
      await connection.close();
    }
    rows.push({
      name: `${session.length} tool calls, ${granting ? 'one grant per repeated command' : 'no grants'}`,
      n: session.length,
      note:
        `${decisions} human decisions, ${byGrant} approved by grants ` +
        `(${((performance.now() - started) / 1000).toFixed(0)} s)`,
    });
  }
  rmSync(baseDir, { recursive: true, force: true });
  return rows;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await runAlone(
    'Scoped grants (issue 25): lookup and use on the lightweight path, submit -> final outcome',
    benchGrants,
  );
}
