/**
 * Issue 21, finding 6: one agent cannot starve the others. An agent past its proposals per window, or with too many
 * proposals waiting for a person, is refused (the limit named, and when it resets) while another agent's proposals go
 * through; memory_write reaches only the agent's own stores, and no store grows past its cap. Against the run's real
 * Temporal dev server, the limits counted from its visibility.
 */
// First: this process's Runtime exports metrics (the executor's refusals are counted there).
import { scrape } from '../helpers/metrics';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { submitAndWait, submitProposal } from '../../src/client/proposals';
import { createGate, type GateRules } from '../../src/gate';
import { McpRuleSchema } from '../../src/contracts/mcp';
import { refusedAnswer } from '../../src/mcp/answers';
import { LimitExceededError } from '../../src/contracts/errors';
import { proposal, startSystem, type TestSystem } from '../helpers/system';
import { proposalsVisible } from '../helpers/visibility';

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));
const REPO = fileURLToPath(new URL('../..', import.meta.url));

const PER_AGENT = 4;
const PENDING = 2;

let sys: TestSystem;
let dir: string;
beforeAll(async () => {
  sys = await startSystem({
    spec: {
      escalation: { timeout: '10m', approvers: ['scott'], reminderAt: 0 },
      limits: { proposals: { perAgent: PER_AGENT, window: '1m' }, pendingEscalationsPerAgent: PENDING },
      memory: { maxStoreBytes: 600 },
    },
  });
  dir = mkdtempSync(join(tmpdir(), 'agent-judge-limits-'));
});
afterAll(async () => {
  await sys?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const opts = () => ({ taskQueue: sys.taskQueues.workflow, limits: { policy: sys.policy } });

/** Waits until visibility shows `n` proposals of `agent` matching `extra` (it lags the starts). */
const visible = (agent: string, n: number, extra = '') => proposalsVisible(sys, agent, n, extra);

async function refusal(p: Promise<unknown>): Promise<LimitExceededError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LimitExceededError);
  return err as LimitExceededError;
}

describe('per-agent limits', () => {
  it('an agent past its proposals per window is refused, naming the limit and its reset; not another', async () => {
    const flood = `@flood-${randomUUID().slice(0, 8)}`;
    const started = Date.now();
    for (let i = 0; i < PER_AGENT; i++) {
      const out = await submitAndWait(sys.client, proposal('vault_note_create', { agent_id: flood }), opts());
      expect(out.status).toBe('approved');
    }
    await visible(flood, PER_AGENT);

    const err = await refusal(submitAndWait(sys.client, proposal('vault_note_create', { agent_id: flood }), opts()));
    expect(err.limit).toBe('proposals_per_agent');
    expect(err.message).toContain(`limit proposals_per_agent: ${flood} submitted ${PER_AGENT} proposals`);
    // It resets when the oldest of the window's proposals leaves it: a minute after that one started.
    const resetsAt = Date.parse(err.resetsAt ?? '');
    expect(resetsAt).toBeGreaterThan(started + 55_000);
    expect(resetsAt).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(err.message).toContain(`resets at ${err.resetsAt}`);

    // Another agent is untouched by the first one's limit.
    const quiet = `@quiet-${randomUUID().slice(0, 8)}`;
    const other = await submitAndWait(sys.client, proposal('vault_note_create', { agent_id: quiet }), opts());
    expect(other.status).toBe('approved');
  });

  it('through the gate (what the MCP proxy runs), a call past the limit is refused with its words', async () => {
    const rules: GateRules = {
      rules: [
        McpRuleSchema.parse({
          name: 'notes.write',
          server: 'notes',
          tool: 'write_note',
          actionType: 'vault_note_create',
          target: { vault: 'main', path: '$.path' },
          parameters: { content: '$.content' },
        }),
      ],
    };
    const agent = `@mcp-${randomUUID().slice(0, 8)}`;
    const gate = createGate({
      client: sys.client,
      taskQueue: sys.taskQueues.workflow,
      limits: { policy: sys.policy },
      rules,
      performer: { agentId: agent, redeemer: 'hook:limits' },
      holdMs: 10_000,
    });
    const write = () =>
      gate.decide({
        runtime: 'fake',
        server: 'notes',
        tool: 'write_note',
        arguments: { path: `notes/${randomUUID()}.md`, content: '# hi' },
      });
    for (let i = 0; i < PER_AGENT; i++) {
      const a = await write();
      expect(a.kind).toBe('forward');
      if (a.kind === 'forward') await a.lease?.report('ok');
    }
    await visible(agent, PER_AGENT);
    const refused = await write();
    expect(refused).toMatchObject({ kind: 'refused', proposal: null });
    const reason = refused.kind === 'refused' ? refused.reason : '';
    expect(reason).toMatch(
      new RegExp(`^limit proposals_per_agent: ${agent} submitted ${PER_AGENT} proposals .*resets at 20`),
    );
    // The MCP proxy answers it as an error result in these words.
    const answer = refusedAnswer(reason);
    expect(answer).toMatchObject({
      isError: true,
      _meta: { 'dev.agent-judge/verdict': { outcome: 'REFUSED', reason } },
    });
    expect(answer.content).toEqual([{ type: 'text', text: `REJECT: ${reason}. Not performed.` }]);
  });

  it('the CLI exits 4 on a limit and says which one and when it resets', async () => {
    const agent = `@cli-${randomUUID().slice(0, 8)}`;
    for (let i = 0; i < PER_AGENT; i++) {
      await submitProposal(sys.client, proposal('vault_note_create', { agent_id: agent }), opts());
    }
    await visible(agent, PER_AGENT);
    const policyFile = join(dir, 'limits.yaml');
    writeFileSync(
      policyFile,
      'apiVersion: agent-judge.dev/v1alpha1\nkind: CompliancePolicy\nmetadata:\n  name: limits\n' +
        `spec:\n  limits:\n    proposals: { perAgent: ${PER_AGENT}, window: 1m }\n`,
    );
    const file = join(dir, `${randomUUID()}.json`);
    writeFileSync(file, JSON.stringify(proposal('vault_note_create', { agent_id: agent })));
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [BIN, 'propose', file, '--task-queue', sys.taskQueues.workflow],
        {
          cwd: REPO,
          env: {
            ...process.env,
            TEMPORAL_ADDRESS: inject('temporalAddress'),
            TEMPORAL_NAMESPACE: inject('temporalNamespace'),
            AGENT_JUDGE_POLICY: policyFile,
          },
          timeout: 50_000,
        },
        (e, stdout, stderr) => resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, stdout, stderr }),
      );
    });
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      new RegExp(`agent-judge: limit proposals_per_agent: ${agent} submitted ${PER_AGENT} proposals .*resets at 20`),
    );
    expect(run.code).toBe(4);
  });

  it('past its pending escalations, a new human-only proposal is refused; its others, other agents go on', async () => {
    const waiter = `@waiter-${randomUUID().slice(0, 8)}`;
    for (let i = 0; i < PENDING; i++) {
      const out = await submitAndWait(sys.client, proposal('financial_op', { agent_id: waiter }), opts());
      expect(out.status).toBe('awaiting_human');
    }
    await visible(waiter, PENDING, " AND ExecutionStatus = 'Running' AND Stage = 'awaiting_human'");

    const err = await refusal(submitAndWait(sys.client, proposal('financial_op', { agent_id: waiter }), opts()));
    expect(err.limit).toBe('pending_escalations_per_agent');
    expect(err.message).toContain(`${waiter} has ${PENDING} proposals waiting for a person`);
    // A slot frees at the latest when the oldest waiting proposal's escalation times out (10m after it started).
    const resetsAt = Date.parse(err.resetsAt ?? '');
    expect(resetsAt).toBeGreaterThan(Date.now() + 9 * 60_000);
    expect(resetsAt).toBeLessThanOrEqual(Date.now() + 10 * 60_000);

    // What does not wait for a person is still judged.
    const note = await submitAndWait(sys.client, proposal('vault_note_create', { agent_id: waiter }), opts());
    expect(note.status).toBe('approved');
    // Another agent's human-only proposal still reaches the approvers.
    const other = `@other-${randomUUID().slice(0, 8)}`;
    const theirs = await submitAndWait(sys.client, proposal('financial_op', { agent_id: other }), opts());
    expect(theirs.status).toBe('awaiting_human');
  });

  it("memory_write into another agent's store is rejected, naming the rule; its own store is written", async () => {
    const id = randomUUID().slice(0, 8);
    const [writer, victim] = [`@writer-${id}`, `@victim-${id}`];
    const foreign = proposal('memory_write', {
      agent_id: writer,
      target: { store: `victim-${id}` },
      parameters: { content: 'poisoned' },
    });
    const out = await submitAndWait(sys.client, foreign, opts());
    expect(out.status).toBe('rejected');
    expect(out.verdict).toMatchObject({ verdict: 'REJECT', rule: 'memory.store', decided_by: 'rules' });
    expect(out.verdict?.reason).toContain(`memory store "victim-${id}" is not ${writer}'s`);
    expect(existsSync(join(sys.policy.spec.memory.dir, `victim-${id}.jsonl`))).toBe(false);

    const own = proposal('memory_write', {
      agent_id: victim,
      target: { store: `victim-${id}.notes` },
      parameters: { content: 'mine' },
    });
    expect((await submitAndWait(sys.client, own, opts())).status).toBe('executed');
    expect(readFileSync(join(sys.policy.spec.memory.dir, `victim-${id}.notes.jsonl`), 'utf8')).toContain('mine');
  });

  it('a write that would grow a store past spec.memory.maxStoreBytes is refused by the executor', async () => {
    const id = randomUUID().slice(0, 8);
    const agent = `@big-${id}`;
    const write = (content: string) =>
      submitAndWait(
        sys.client,
        proposal('memory_write', { agent_id: agent, target: { store: `big-${id}` }, parameters: { content } }),
        opts(),
      );
    expect((await write('a'.repeat(200))).status).toBe('executed');
    const refusals = async () =>
      (await scrape()).samples.find(
        (x) =>
          x.name === 'agent_judge_limit_refusals_total' &&
          x.labels.taskQueue === sys.taskQueues.execute &&
          x.labels.limit === 'memory_store_bytes',
      )?.value;
    const before = await refusals();
    expect(before).toBe(0);
    const out = await write('b'.repeat(200));
    expect(out.status).toBe('failed');
    expect(out.execution).toMatchObject({ status: 'refused' });
    expect(out.execution?.error).toMatch(/^limit memory_store_bytes: store big-\w+ holds \d+ bytes .*\(600\)/);
    const text = readFileSync(join(sys.policy.spec.memory.dir, `big-${id}.jsonl`), 'utf8');
    expect(text).not.toContain('bbbb');
    // Counted once, by limit, in the process that refused it.
    for (let i = 0; i < 50 && (await refusals()) !== 1; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await refusals()).toBe(1);
  });
});
