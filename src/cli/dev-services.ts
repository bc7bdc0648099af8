/**
 * The services `dev` runs beside the workers, each optional: the resident gate for coding agents' hooks and the web
 * approval inbox. A failure to start one leaves it off and says why in the banner; `dev` runs on.
 */
import { resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import type { Logger } from '../contracts/logger';
import type { CompliancePolicy } from '../contracts/policy';

/**
 * `dev`'s resident gate for coding agents' hooks (docs/hooks.md): on the policy's loopback address; a busy port or
 * any other failure leaves it off (said at start: the hooks then block, never allow).
 */
export async function startDevHookGate(
  policy: CompliancePolicy,
  client: Client,
  taskQueue: string,
  logger: Logger,
): Promise<{ line: string; close: () => Promise<void> }> {
  try {
    const { startResidentGate } = await import('../hooks/resident');
    const gate = await startResidentGate({
      policy,
      client,
      taskQueue,
      stateDir: resolve('.agent-judge'),
      logger: logger.child({ component: 'hooks-gate' }),
    });
    return {
      line:
        `gate ${gate.url} for ${gate.agents.join(', ')}${gate.tokenFile ? ` (token ${gate.tokenFile})` : ''}; ` +
        'agent-judge hook install claude-code|codex|gemini',
      close: () => gate.close(),
    };
  } catch (err) {
    return {
      line: `off (${(err as Error).message}); hooks installed for this machine block until a gate runs`,
      close: () => Promise.resolve(),
    };
  }
}

/**
 * `dev`'s web approval inbox (docs/inbox.md) on loopback, port 8787 or any free one when that is taken; any other
 * failure leaves it off, said at start.
 */
export async function startDevInbox(
  policy: CompliancePolicy,
  client: Client,
  registryPath: string,
  taskQueue: string,
  logger: Logger,
): Promise<{ line: string; url?: string; close: () => Promise<void> }> {
  try {
    const { DEFAULT_INBOX_PORT, DEFAULT_INBOX_STATE_DIR, serveInbox } = await import('./inbox');
    const options = {
      client,
      policy,
      registryPath: resolve(registryPath),
      stateDir: resolve(DEFAULT_INBOX_STATE_DIR),
      taskQueue,
      logger: logger.child({ component: 'inbox' }),
    };
    const inbox = await serveInbox({ ...options, port: DEFAULT_INBOX_PORT }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EADDRINUSE') throw err;
      return serveInbox({ ...options, port: 0 });
    });
    return {
      line: `${inbox.url}; enrol an approver's passkey: agent-judge inbox invite --approver <id>`,
      url: inbox.url,
      close: () => inbox.close(),
    };
  } catch (err) {
    return { line: `off (${(err as Error).message})`, close: () => Promise.resolve() };
  }
}
