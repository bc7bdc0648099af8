/**
 * Operator keys reach a registry that is already running: the workflow workers are real
 * `agent-judge worker --role workflow` processes, restarted with and without
 * AGENT_JUDGE_CIRCLE_OPERATOR_KEYS, and the very next unsigned register after each restart sees the
 * keys of the worker now running. The keys travel only through the worker's configuration.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { CircleRegistryClient } from '../../src/client/circles';
import { generateIdentity } from '../../src/identity/keys';
import { generateCapabilityKey } from '../../src/identity/capability-key';
import { defaultPolicyWith } from '../../src/policy/load';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A workflow worker signs capability tokens: it needs a key the policy lists (the registry reads neither).
const capabilityKey = generateCapabilityKey('circles-test');
const policyFile = join(mkdtempSync(join(tmpdir(), 'agent-judge-circles-keys-')), 'policy.yaml');
writeFileSync(
  policyFile,
  JSON.stringify(defaultPolicyWith({ capabilities: { issuers: { [capabilityKey.kid]: capabilityKey.public_key } } })),
);

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));
const prefix = `circles-keys-${randomUUID().slice(0, 8)}`;
let connection: Connection;
let client: Client;
let worker: ChildProcess | undefined;
const output: string[] = [];

/** Starts `agent-judge worker --role workflow` and resolves once it says its workers run. */
function startWorker(operatorKeys: string[]): Promise<ChildProcess> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    AGENT_JUDGE_CIRCLE_OPERATOR_KEYS: operatorKeys.join(','),
    AGENT_JUDGE_CAPABILITY_KEY: `${capabilityKey.kid}:${capabilityKey.private_key}`,
    LOG_FORMAT: 'json',
  };
  delete env.AGENT_JUDGE_POLICY;
  const args = [BIN, 'worker', '--role', 'workflow', '--task-queue-prefix', prefix, '--policy', policyFile];
  const child = spawn(process.execPath, args, {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stderr.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('workers running')) resolve(child);
    });
    child.on('exit', (code) => {
      output.push(seen);
      reject(new Error(`worker exited with ${code} before running: ${seen}`));
    });
  });
}

/** Stops the worker as an operator would (SIGTERM: graceful shutdown) and waits for its exit. */
async function stopWorker(): Promise<void> {
  const child = worker;
  worker = undefined;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

async function restartWorker(operatorKeys: string[]): Promise<string> {
  await stopWorker();
  worker = await startWorker(operatorKeys);
  return output.join('');
}

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: inject('temporalNamespace') });
});
afterAll(async () => {
  await stopWorker();
  await connection?.close();
});

describe('operator keys on a running registry', () => {
  it('take effect at the next action after the workers restart with them, and their removal too', async () => {
    const operator = generateIdentity();
    const workflowId = `circle-registry-keys-${randomUUID().slice(0, 8)}`;
    const registry = (operatorKey?: typeof operator) =>
      new CircleRegistryClient({ client, taskQueue: prefix, workflowId, operatorKey });
    const anyone = registry();
    const asOperator = registry(operator);
    const run = async () => (await asOperator.runInfo()).run_id;

    worker = await startWorker([]);
    const first = generateIdentity();
    expect(await anyone.registerTopLevel({ public_key: first.public_key })).toMatchObject({ amid: first.amid });
    const runId = await run();

    await restartWorker([operator.public_key]);
    const second = generateIdentity();
    await expect(anyone.registerTopLevel({ public_key: second.public_key })).rejects.toThrow(
      /operator action: sign it with an operator key/,
    );
    expect(await anyone.agent(second.amid)).toBeNull();
    expect(await asOperator.registerTopLevel({ public_key: second.public_key })).toMatchObject({
      amid: second.amid,
      role: 'top-level',
    });

    await restartWorker([]);
    const third = generateIdentity();
    expect(await anyone.registerTopLevel({ public_key: third.public_key })).toMatchObject({ amid: third.amid });
    // The same run throughout: no continue-as-new was needed for the keys to change.
    expect(await run()).toBe(runId);

    // What history records: one content-free signal per restart, and each reading of the keys.
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const signals = history.events!.filter((e) => e.workflowExecutionSignaledEventAttributes);
    expect(signals.map((e) => e.workflowExecutionSignaledEventAttributes!.signalName)).toEqual([
      'circles.operatorKeysChanged',
      'circles.operatorKeysChanged',
    ]);
    expect(signals.every((e) => (e.workflowExecutionSignaledEventAttributes!.input?.payloads ?? []).length === 0)).toBe(
      true,
    );
    expect(history.events!.filter((e) => e.markerRecordedEventAttributes).length).toBe(3);
    expect(history.events!.some((e) => e.workflowTaskFailedEventAttributes)).toBe(false);
  });
});
