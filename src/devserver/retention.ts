/**
 * The namespace's retention: how long Temporal keeps a closed workflow (and so a proposal's history) before deleting
 * it. `dev` sets it from `spec.audit.retention`; `worker` only reads it and warns, because on a shared cluster the
 * namespace belongs to its operator.
 *
 * Set through the gRPC UpdateNamespace call on the connection we already hold, not the Temporal CLI: it works the same
 * against the embedded dev server and a remote cluster (TLS, API keys), needs no second process, and an error comes
 * back as a status code rather than CLI text to parse.
 */
import type { Connection } from '@temporalio/client';
import { msNumberToTs, optionalTsToMs } from '@temporalio/common/lib/time.js';

const DAY_MS = 86_400_000;

/**
 * The least retention the audit cadence needs (seed 000 §6): the weekly review reads a whole ISO week, which closed up
 * to 7 days before the review runs, plus a day for a review done late.
 */
export const AUDIT_CADENCE_RETENTION_MS = 8 * DAY_MS;

/** How long the namespace keeps closed workflows, in milliseconds (null when the server does not say). */
export async function namespaceRetentionMs(connection: Connection, namespace: string): Promise<number | null> {
  const described = await connection.workflowService.describeNamespace({ namespace });
  return optionalTsToMs(described.config?.workflowExecutionRetentionTtl) ?? null;
}

/** Sets the namespace's retention; the server applies only the config fields a request sets: nothing else changes. */
export async function setNamespaceRetention(connection: Connection, namespace: string, ms: number): Promise<void> {
  await connection.workflowService.updateNamespace({
    namespace,
    config: { workflowExecutionRetentionTtl: msNumberToTs(Math.ceil(ms / 1000) * 1000) },
  });
}

/** A retention as people write it: whole days as `90d`, else hours. */
export function formatRetention(ms: number): string {
  return ms % DAY_MS === 0 ? `${ms / DAY_MS}d` : `${Math.round((ms / 3_600_000) * 100) / 100}h`;
}

/**
 * One line for the log when the namespace would delete closed proposals before the weekly review reads them; null
 * when it keeps them long enough. Names the setting, the figure and how to change it.
 */
export function retentionWarning(namespace: string, retentionMs: number | null): string | null {
  if (retentionMs === null || retentionMs >= AUDIT_CADENCE_RETENTION_MS) return null;
  const hours = Math.ceil(AUDIT_CADENCE_RETENTION_MS / 3_600_000);
  return (
    `namespace ${namespace} keeps closed workflows for ${formatRetention(retentionMs)} (its workflow execution ` +
    `retention); the weekly audit review needs at least ${formatRetention(AUDIT_CADENCE_RETENTION_MS)}: run ` +
    `\`temporal operator namespace update --retention ${hours}h ${namespace}\` (agent-judge dev sets ` +
    'spec.audit.retention itself); until then only the archive keeps older proposals'
  );
}
