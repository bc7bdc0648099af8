/**
 * The services `dev` runs beside the workers, each optional: the resident gate for coding agents' hooks and the web
 * approval inbox. A failure to start one leaves it off and says why in the banner; `dev` runs on.
 */
import { resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import type { Logger } from '../contracts/logger';
import type { CompliancePolicy } from '../contracts/policy';

/** The banner's indent for a line that continues the one above. */
export const CONTINUED = ' '.repeat(12);

/** Who holds a taken gate port: another agent-judge gate answers `/hooks/whoami` with its own realm. */
async function holderOf(host: string, port: number): Promise<string> {
  try {
    const res = await fetch(`http://${host.includes(':') ? `[${host}]` : host}:${port}/hooks/whoami`, {
      signal: AbortSignal.timeout(2000),
    });
    return (res.headers.get('www-authenticate') ?? '').includes('agent-judge')
      ? 'another agent-judge gate'
      : 'another program';
  } catch {
    return 'another program';
  }
}

/** A started dev service: its banner line and how to stop it. */
export interface DevService {
  line: string;
  url?: string;
  /** The dev token's file (the gate): `hook install` registers projects with it. */
  tokenFile?: string;
  close: () => Promise<void>;
}

/**
 * `dev`'s resident gate for coding agents' hooks (docs/hooks.md): on the policy's loopback address, or `--gate-port`.
 * A chosen port that is taken is an error (checked before anything starts); the default one moves to a free port,
 * said in the banner with who holds it, and recorded in the user's state folder so `hook install` finds it. Any
 * other failure leaves it off, said at start (the hooks then block, never allow).
 */
export async function startDevHookGate(o: {
  policy: CompliancePolicy;
  client: Client;
  taskQueue: string;
  logger: Logger;
  port?: number;
  userStateDir: string;
}): Promise<DevService> {
  try {
    const { parseGateListen, startResidentGate } = await import('../hooks/resident');
    const { host, port: policyPort } = parseGateListen(o.policy.spec.hooks.gate.listen);
    const wanted = o.port ?? policyPort;
    const start = (port: number) =>
      startResidentGate({
        policy: o.policy,
        client: o.client,
        taskQueue: o.taskQueue,
        stateDir: resolve('.agent-judge'),
        listen: `${host.includes(':') ? `[${host}]` : host}:${port}`,
        userStateDir: o.userStateDir,
        logger: o.logger.child({ component: 'hooks-gate' }),
      });
    let moved = '';
    const gate = await start(wanted).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EADDRINUSE' || o.port !== undefined) throw err;
      moved = `\n${CONTINUED}moved from port ${wanted}: it is taken by ${await holderOf(host, wanted)}`;
      return start(0);
    });
    return {
      line:
        `gate ${gate.url} for ${gate.agents.join(', ')}; ` +
        `in each project: agent-judge hook install claude-code|codex|gemini${moved}`,
      url: gate.url,
      ...(gate.tokenFile ? { tokenFile: gate.tokenFile } : {}),
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
 * `dev`'s web approval inbox (docs/inbox.md) on loopback: `--inbox-port` (taken: an error, checked before anything
 * starts), else 8787 or any free one when that is taken (said in the banner); any other failure leaves it off, said
 * at start.
 */
export async function startDevInbox(
  policy: CompliancePolicy,
  client: Client,
  registryPath: string,
  taskQueue: string,
  logger: Logger,
  port?: number,
): Promise<DevService> {
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
    let moved = '';
    const wanted = port ?? DEFAULT_INBOX_PORT;
    const inbox = await serveInbox({ ...options, port: wanted }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EADDRINUSE' || port !== undefined) throw err;
      moved = `\n${CONTINUED}moved from port ${wanted}: it is taken (--inbox-port chooses one)`;
      return serveInbox({ ...options, port: 0 });
    });
    return {
      line: `${inbox.url}; enrol an approver's passkey: agent-judge inbox invite --approver <id>${moved}`,
      url: inbox.url,
      close: () => inbox.close(),
    };
  } catch (err) {
    return { line: `off (${(err as Error).message})`, close: () => Promise.resolve() };
  }
}
