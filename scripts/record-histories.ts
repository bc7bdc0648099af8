/**
 * Records proposal workflow histories down each main path into test/fixtures/histories/, so
 * test/integration/replay-fixtures.test.ts replays them against the workflow code: a change to a workflow's command
 * sequence fails those tests until the set is recorded again. Before 1.0 there is ONE set, recorded by the current
 * code (VERSIONING.md): a change that alters command sequences re-records it, it does not add a versioned copy.
 * Run: [CASES=no-judge-executed,...] node --import tsx scripts/record-histories.ts
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import pino from 'pino';
import { redeemCapability } from '../src/client/capabilities';
import { reportCallerOutcome } from '../src/client/performer';
import { clarify, decide, submitAndSettle, submitAndWait } from '../src/client/proposals';
import { capabilityBinding } from '../src/contracts/capability';
import { safeParseProposal } from '../src/contracts/proposal';
import { startDevServer } from '../src/devserver/server';
import { createLogger } from '../src/cli/shared';
import { findTemporalCli } from '../src/devserver/temporal-cli';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { createWorkers } from '../src/worker';
import { generateCapabilityKey, loadCapabilityKey, withCapabilityIssuer } from '../src/identity/capability-key';

Runtime.install({ logger: new DefaultLogger('ERROR') });
const OUT = fileURLToPath(new URL('../test/fixtures/histories/', import.meta.url));
mkdirSync(OUT, { recursive: true });
const server = await startDevServer({ cliPath: findTemporalCli({ logger: createLogger() }), headless: true });
const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-record-'));
// The recorded exec run is approved on the rules alone, as before withoutModel existed.
const capabilityFile = generateCapabilityKey('record');
const capabilityKey = await loadCapabilityKey(`${capabilityFile.kid}:${capabilityFile.private_key}`);
const basePolicy = defaultPolicyWith(
  {
    escalation: { approvers: ['scott'], timeout: '2s', reminderAt: 0.5 },
    judge: { withoutModel: 'approve' },
    // An approval the caller performs keeps its run open until its token is redeemed or expires: the shortest
    // lifetime, so a case that redeems nothing closes (and is recorded) seconds later, not after ten minutes.
    capabilities: { ttl: '10s' },
  },
  { baseDir },
);
const policy = withCapabilityIssuer(basePolicy, capabilityKey);
const queues = taskQueuesFor(`record-${randomUUID()}`);
const connection = await Connection.connect({ address: server.address });
const client = new Client({ connection, namespace: server.namespace });
const native = await NativeConnection.connect({ address: server.address });
const workers = await createWorkers({
  connection: native,
  namespace: server.namespace,
  taskQueues: queues,
  policy,
  client,
  logger: pino({ level: 'silent' }),
  baseDir,
  capabilityKey,
});
const running = workers.map((w) => w.run());

const base = (type: string, extra: object) => ({
  proposal_id: randomUUID(),
  agent_id: '@engineering',
  action_type: type,
  justification: `recorded ${type}`,
  cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/42' }],
  ...extra,
});
const cases: Array<[string, () => Promise<string>]> = [
  [
    'no-judge-executed',
    async () =>
      (
        await submitAndWait(
          client,
          base('memory_write', { target: { store: 'memory' }, parameters: { content: 'x' } }),
          { taskQueue: queues.workflow },
        )
      ).workflow_id,
  ],
  [
    'lightweight-rejected',
    async () =>
      (
        await submitAndWait(
          client,
          base('issue_comment', { target: { repo: 'a/b', issue: 1 }, parameters: { body: 'AKIAABCDEFGHIJKLMNOP' } }),
          { taskQueue: queues.workflow },
        )
      ).workflow_id,
  ],
  [
    // Approved, performed by the caller: the run closes when the caller redeems the token it was issued.
    'lightweight-approved-redeemed',
    async () => {
      const p = base('vault_note_create', {
        target: { vault: 'main', path: 'notes/standup.md' },
        parameters: { content: '# Standup' },
      });
      const out = await submitAndWait(client, p, { taskQueue: queues.workflow });
      const token = out.capability?.token;
      if (!token) throw new Error(`no capability token: ${JSON.stringify(out)}`);
      const parsed = safeParseProposal(p);
      if (!parsed.ok) throw new Error(parsed.refusal.reason);
      await redeemCapability(client, { token, action: parsed.value, redeemer: 'record-histories' });
      return out.workflow_id;
    },
  ],
  [
    // Performed by its caller (a runtime's gate, the MCP proxy): the settling Update leases the approval to the one
    // performer, which reports the outcome; the run closes on it.
    'caller-leased-reported',
    async () => {
      const p = base('vault_note_create', {
        target: { vault: 'main', path: 'notes/call.md' },
        parameters: { content: '# Call' },
        performer: { by: 'caller', call: 'c'.repeat(64), sequence: 0, server: 'record', tool: 'write_note' },
      });
      const parsed = safeParseProposal(p);
      if (!parsed.ok) throw new Error(parsed.refusal.reason);
      const { aud, action_sha256 } = capabilityBinding(parsed.value);
      const nonce = `record:${randomUUID()}`;
      const { outcome } = await submitAndSettle(client, p, {
        taskQueue: queues.workflow,
        lease: {
          lease: 'forwarding',
          audience: aud,
          action_sha256,
          redeemer: 'record-histories',
          nonce,
          lease_before: new Date(Date.now() + 60_000).toISOString(),
        },
      });
      await reportCallerOutcome(client, outcome.workflow_id, { outcome: 'ok' });
      return outcome.workflow_id;
    },
  ],
  [
    'clarified-approved',
    async () => {
      const p = base('forgejo_pr_create', {
        cited_evidence: [],
        target: { repo: 'a/b', branch: 'f', base: 'main' },
        parameters: { files_changed: ['src/a.ts'], estimated_diff_lines: 3 },
      });
      const asked = await submitAndWait(client, p, { taskQueue: queues.workflow });
      return (
        await clarify(client, asked.workflow_id, {
          cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/1' }],
        })
      ).workflow_id;
    },
  ],
  [
    'human-approved-executed',
    async () => {
      const p = base('financial_op', { target: { account: 'ops' }, parameters: { amount: 1, currency: 'EUR' } });
      const escalated = await submitAndWait(client, p, { taskQueue: queues.workflow });
      return (await decide(client, escalated.workflow_id, { decision: 'approve', approver: 'scott' })).workflow_id;
    },
  ],
  [
    'human-timeout-with-reminder',
    async () => {
      const p = base('impersonation', { target: { identity: '@x' }, parameters: { purpose: 'y' } });
      const out = await submitAndWait(client, p, { taskQueue: queues.workflow });
      await client.workflow.getHandle(out.workflow_id).result();
      return out.workflow_id;
    },
  ],
  [
    'exec-executed',
    async () =>
      (
        await submitAndWait(
          client,
          base('exec', { target: { host: 'local' }, parameters: { command: ['echo', 'hi'] } }),
          { taskQueue: queues.workflow },
        )
      ).workflow_id,
  ],
];
// CASES=a,b records only those (the judged cases look up cited evidence on the network).
const only = process.env.CASES?.split(',');
for (const [name, run] of cases.filter(([name]) => !only || only.includes(name))) {
  const workflowId = await run();
  await client.workflow.getHandle(workflowId).result();
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  writeFileSync(join(OUT, `${name}.json`), historyToJSON(history));
  console.log(`recorded ${name} (${history.events?.length} events)`);
}
for (const w of workers) w.shutdown();
await Promise.allSettled(running);
await native.close();
await connection.close();
await server.stop();
