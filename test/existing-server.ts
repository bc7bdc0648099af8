import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { ensureSearchAttributes } from '../src/devserver/server';

/**
 * The suite against a server it did not start (`npm run test:cluster`: AGENT_JUDGE_TEST_TEMPORAL_ADDRESS). Each run
 * gets a namespace of its own, so nothing an earlier run left (workflows, audit-flag counts, schedules) is seen: the
 * namespace is registered, given the project's search attributes, and used only once every frontend and history host
 * serves it (a new namespace reaches the servers' caches within seconds; a workflow start proves history has it).
 */
export async function freshNamespace(address: string, log: (line: string) => void): Promise<string> {
  const namespace = `test-${new Date().toISOString().slice(0, 19).replace(/[-:T]/g, '')}-${randomUUID().slice(0, 6)}`;
  const connection = await Connection.connect({ address, connectTimeout: '10s' });
  try {
    await registerNamespace(connection, namespace);
    const deadline = Date.now() + 120_000;
    let added: string[] | undefined;
    let lastError: unknown;
    while (Date.now() < deadline) {
      try {
        added ??= await ensureSearchAttributes(connection, namespace);
        const client = new Client({ connection, namespace });
        const probe = await client.workflow.start('namespace-probe', {
          taskQueue: 'namespace-probe',
          workflowId: randomUUID(),
        });
        await probe.terminate('namespace probe');
        log(`test setup: namespace ${namespace} on ${address} (search attributes added: ${added.length})`);
        return namespace;
      } catch (err) {
        lastError = err;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    throw new Error(`namespace ${namespace} on ${address} never became usable: ${String(lastError)}`);
  } finally {
    await connection.close();
  }
}

/** Registers a namespace that keeps closed workflows one day, without search attributes of its own. */
export async function registerNamespace(connection: Connection, namespace: string): Promise<void> {
  await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
}
