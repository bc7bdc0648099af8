/**
 * Records proposal workflow histories down each main path into test/fixtures/histories/, so
 * test/integration/replay-fixtures.test.ts can replay them against every later version of the
 * workflow code: a change that would break running proposals fails the tests.
 * Run: SUFFIX=-v3 [CASES=no-judge-executed,...] node --import tsx scripts/record-histories.ts
 * (keep older recordings: they prove that running proposals of earlier versions still replay)
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import pino from 'pino';
import { redeemCapability } from '../src/client/capabilities';
import { clarify, decide, submitAndWait } from '../src/client/proposals';
import { safeParseProposal } from '../src/contracts/proposal';
import { startDevServer } from '../src/devserver/server';
import { findTemporalCli } from '../src/devserver/temporal-cli';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { createWorkers } from '../src/worker';
import { generateCapabilityKey, loadCapabilityKey, withCapabilityIssuer } from '../src/identity/capability-key';

Runtime.install({ logger: new DefaultLogger('ERROR') });
const OUT = fileURLToPath(new URL('../test/fixtures/histories/', import.meta.url));
const server = await startDevServer({ cliPath: findTemporalCli(), headless: true });
const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-record-'));
// The recorded exec run is approved on the rules alone, as before withoutModel existed.
const capabilityFile = generateCapabilityKey('record');
const capabilityKey = await loadCapabilityKey(`${capabilityFile.kid}:${capabilityFile.private_key}`);
const basePolicy = defaultPolicyWith(
  { escalation: { approvers: ['scott'], timeout: '2s', reminderAt: 0.5 }, judge: { withoutModel: 'approve' } },
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
      if (!parsed.ok) throw new Error(parsed.error);
      await redeemCapability(client, { token, action: parsed.value, redeemer: 'record-histories' });
      return out.workflow_id;
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
      await submitAndWait(client, p, { taskQueue: queues.workflow });
      return (
        await clarify(client, p.proposal_id, {
          cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/1' }],
        })
      ).workflow_id;
    },
  ],
  [
    'human-approved-executed',
    async () => {
      const p = base('financial_op', { target: { account: 'ops' }, parameters: { amount: 1, currency: 'EUR' } });
      await submitAndWait(client, p, { taskQueue: queues.workflow });
      return (await decide(client, p.proposal_id, { decision: 'approve', approver: 'scott' })).workflow_id;
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
  writeFileSync(join(OUT, `${name}${process.env.SUFFIX ?? ''}.json`), historyToJSON(history));
  console.log(`recorded ${name} (${history.events?.length} events)`);
}
for (const w of workers) w.shutdown();
await Promise.allSettled(running);
await native.close();
await connection.close();
await server.stop();
