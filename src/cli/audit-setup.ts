/**
 * What `dev` and `worker` do at start so the audit trail outlives the namespace's retention: `dev` sets the retention
 * from the policy, `worker` warns when it is too short for the audit cadence, and whoever runs the archive role
 * creates the archive Schedule.
 */
import type { Client, Connection } from '@temporalio/client';
import type { Logger } from '../contracts/logger';
import { durationMs, type CompliancePolicy } from '../contracts/policy';
import { formatRetention, namespaceRetentionMs, retentionWarning, setNamespaceRetention } from '../devserver/retention';
import type { TaskQueues } from '../names';
import { ensureArchiveSchedule } from '../worker/archive-schedule';

export interface AuditSetup {
  connection: Connection;
  client: Client;
  namespace: string;
  policy: CompliancePolicy;
  taskQueues: TaskQueues;
  logger: Logger;
  /** `dev`: the namespace is ours, so set its retention from `spec.audit.retention`. */
  setRetention: boolean;
  /** This process runs the archive role: create (or update) the archive Schedule. */
  archive: boolean;
}

/** Returns the lines `dev` prints about retention and the archive. */
export async function prepareAudit(setup: AuditSetup): Promise<string[]> {
  const { connection, namespace, logger, policy } = setup;
  const lines: string[] = [];
  if (setup.setRetention) {
    await setNamespaceRetention(connection, namespace, durationMs(policy.spec.audit.retention));
  }
  try {
    const retention = await namespaceRetentionMs(connection, namespace);
    if (retention !== null)
      lines.push(`retention   ${formatRetention(retention)} (closed proposals, then the archive)`);
    const warning = retentionWarning(namespace, retention);
    if (warning) logger.warn(warning);
  } catch (err) {
    logger.warn({ err: (err as Error).message }, `could not read the retention of namespace ${namespace}`);
  }
  if (setup.archive) {
    const { scheduleId } = await ensureArchiveSchedule(setup.client, { taskQueues: setup.taskQueues, policy });
    const every = policy.spec.audit.archive.every;
    lines.push(`archive     ${policy.spec.audit.archive.dir} (Schedule ${scheduleId}, every ${String(every)})`);
    logger.info({ scheduleId, dir: policy.spec.audit.archive.dir, every }, 'archive schedule ready');
  }
  return lines;
}
