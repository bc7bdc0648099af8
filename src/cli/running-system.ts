/**
 * What the running system says, for commands in any terminal: the approvers the workers accept and the inbox they
 * link, read from the policy in force (src/client/policy-in-force.ts, published by the workflow workers with their
 * effective approvers) and from the running `agent-judge dev`'s record (src/config/user-state.ts). A command that
 * was given its own `--policy` or `--state-dir` uses those instead.
 */
import type { Command } from 'commander';
import { readRunningDev, type RunningDev } from '../config/user-state';

/** The approvers the workers accept, and where that was read; null when no worker has said (older publisher). */
export async function approversInForce(
  cmd: Command,
  taskQueue: string,
): Promise<{ approvers: string[]; source: string } | null> {
  const { connectClient, temporalTarget } = await import('../client/connection');
  const { globalTarget } = await import('./shared');
  const { readPolicyInForce } = await import('../client/policy-in-force');
  let client;
  try {
    client = await connectClient(temporalTarget(globalTarget(cmd)));
    const record = await readPolicyInForce(client, taskQueue);
    if (!record?.current.approvers) return null;
    return {
      approvers: record.current.approvers,
      source: `the policy in force (version ${record.current.version}, published by ${record.current.publisher})`,
    };
  } catch {
    return null;
  } finally {
    await client?.connection.close().catch(() => undefined);
  }
}

/** Whether `name` was given on the command line (or its parent's), not left at its default. */
export function given(cmd: Command, name: string): boolean {
  for (let c: Command | null = cmd; c; c = c.parent) {
    const source = c.getOptionValueSource(name);
    if (source !== undefined && source !== 'default') return true;
  }
  return false;
}

/** The running dev, when one is. */
export function runningDev(): RunningDev | null {
  return readRunningDev();
}
