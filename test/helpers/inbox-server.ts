/**
 * The web inbox for a test, over a test system's workers: its state (invites, sessions) and the passkey registry in
 * the test's folder, on a random loopback port. Every inbox test starts it this way; `extra` adds what one test needs
 * (rate limits).
 */
import { join } from 'node:path';
import type { Logger } from '../../src/contracts/logger';
import { startInbox, type InboxServer } from '../../src/inbox/server';
import type { TestSystem } from './system';

export function startTestInbox(
  sys: TestSystem,
  where: { dir: string; registry: string },
  logger: Logger,
  extra: Partial<Parameters<typeof startInbox>[0]> = {},
): Promise<InboxServer> {
  return startInbox({
    client: sys.client,
    policy: sys.policy,
    registryPath: where.registry,
    stateDir: join(where.dir, 'state'),
    port: 0,
    taskQueue: sys.taskQueues.workflow,
    logger,
    ...extra,
  });
}
