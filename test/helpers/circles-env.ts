/**
 * A real worker for the circle registry against the shared dev server. Only the registry's own
 * workflow file is bundled, so other work in progress cannot break these tests.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import {
  bundleWorkflowCode,
  NativeConnection,
  Runtime,
  Worker,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import type { RegistryConfig } from '../../src/circles/config';
import type { KeyFile } from '../../src/contracts/identity';
import { CircleRegistryClient } from '../../src/client/circles';
import { createCircleActivities } from '../../src/circles/activities';
import { activityInterceptors } from '../../src/activities/failures';

export interface CirclesEnv {
  address: string;
  namespace: string;
  taskQueue: string;
  client: Client;
  worker: Worker;
  /** A registry client on a fresh registry id, so tests never share state. */
  registry(config?: Partial<RegistryConfig>, operatorKey?: KeyFile, workflowId?: string): CircleRegistryClient;
  stop(): Promise<void>;
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

export function registryBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../../src/workflows/circle-registry.ts', import.meta.url)),
    logger: { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} },
  });
  return bundle;
}

let runtimeQuiet = false;

/** Starts a worker on a task queue of its own; `stop()` shuts it down and closes the connections. */
export async function startCirclesEnv(
  address: string,
  namespace: string,
  label: string,
  operatorKeys: string[] = [],
): Promise<CirclesEnv> {
  if (!runtimeQuiet) {
    // Governance events are logged at WARN by design; keep test output readable.
    Runtime.install({
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
    });
    runtimeQuiet = true;
  }
  const taskQueue = `circles-${label}-${randomUUID().slice(0, 8)}`;
  const workerConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: workerConnection,
    namespace,
    taskQueue,
    workflowBundle: await registryBundle(),
    activities: createCircleActivities({ operatorKeys }),
    interceptors: { activity: activityInterceptors },
  });
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace });
  return {
    address,
    namespace,
    taskQueue,
    client,
    worker,
    registry: (config, operatorKey, workflowId) =>
      new CircleRegistryClient({
        client,
        taskQueue,
        workflowId: workflowId ?? `circle-registry-${label}-${randomUUID().slice(0, 8)}`,
        config,
        operatorKey,
      }),
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
      await workerConnection.close();
    },
  };
}
