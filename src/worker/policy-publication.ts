/**
 * What a worker process says about its policy at start (issue 28): a workflow worker publishes the policy it judges
 * with (src/client/policy-in-force.ts), so every other process can compare; a judge-only or executor-only worker
 * compares its own with the one published and warns when they differ (the judge's model settings and the executor's
 * webhook routes come from its own file; everything a proposal is judged and executed under comes from the workflow
 * worker's snapshot).
 */
import { hostname } from 'node:os';
import type { Client } from '@temporalio/client';
import type { Logger } from '../contracts/logger';
import { policyDigest } from '../contracts/capability';
import type { CompliancePolicy } from '../contracts/policy';
import type { PolicyPublished } from '../contracts/policy-in-force';
import { PolicyWatch, publishPolicy, readPolicyInForce } from '../client/policy-in-force';
import type { LoadedPolicy } from '../policy/load';
import type { WorkerRole } from './index';

/** A bounded wait: the worker's own workflow worker answers the Update, which may take a moment after start. */
const PUBLISH_TIMEOUT_MS = 15_000;

/**
 * Publishes (workflow role) or compares (other roles); resolves to a line for the start banner. Never throws: a
 * worker that cannot publish still runs, and says so.
 */
export async function announceWorkerPolicy(o: {
  client: Client;
  workflowTaskQueue: string;
  loaded: LoadedPolicy;
  /** The policy the workers were given (for `dev`, with its capability key listed): its digest is the snapshot's. */
  policy: CompliancePolicy;
  roles: readonly WorkerRole[];
  logger: Logger;
  /** The inbox people decide in, when these workers know one (dev's own, or AGENT_JUDGE_INBOX_URL). */
  inboxUrl?: string;
}): Promise<string> {
  const { logger } = o;
  if (!o.roles.includes('workflow')) {
    const agreement = await new PolicyWatch({
      client: o.client,
      taskQueue: o.workflowTaskQueue,
      mine: o.loaded.own,
      logger,
    }).start();
    return agreement.message;
  }
  const publication = {
    policy_sha256: policyDigest(o.policy),
    document_sha256: o.loaded.own.document_sha256,
    document: o.loaded.own.document,
    name: o.policy.metadata.name,
    source: o.loaded.path,
    publisher: `${process.pid}@${hostname()} (${o.roles.join(',')})`,
    published_at: new Date().toISOString(),
    approvers: [...o.policy.spec.escalation.approvers],
    ...(o.inboxUrl ? { inbox_url: o.inboxUrl } : {}),
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    // Who published the version in force before this one: a restart replaces a process that has ended.
    const before = await readPolicyInForce(o.client, o.workflowTaskQueue).catch(() => null);
    const previousPublishers = before?.versions.at(-1)?.publishers ?? [];
    const published = await Promise.race([
      publishPolicy(o.client, o.workflowTaskQueue, publication),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${PUBLISH_TIMEOUT_MS / 1000}s`)),
          PUBLISH_TIMEOUT_MS,
        );
      }),
    ]);
    const ended = published.changed && publishersEnded(previousPublishers);
    const line = describePublished(published, publication.policy_sha256, o.workflowTaskQueue, ended);
    if (published.changed && !ended) logger.warn({ event: 'policy.changed', ...published }, line);
    else if (published.changed) logger.info({ event: 'policy.changed', ...published }, line);
    else logger.info({ event: 'policy.published', policy_version: published.version }, line);
    return line;
  } catch (err) {
    const line =
      `could not publish this worker's policy on ${o.workflowTaskQueue} (${(err as Error).message}): other ` +
      'processes cannot check theirs against it';
    logger.warn(line);
    return line;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * True when every process that published the replaced version ran on this host and has ended (a restart, such as the
 * README's `AGENT_JUDGE_APPROVERS=scott npm start` after `npm start`): nothing still judges with it. A publisher on
 * another host, a live process, or one this cannot read (`pid@host (roles)`, src/worker/policy-publication.ts) may
 * still judge: false, and the worker warns.
 */
export function publishersEnded(publishers: readonly string[], host = hostname()): boolean {
  if (publishers.length === 0) return false;
  return publishers.every((publisher) => {
    const m = /^(\d+)@(\S+) /.exec(publisher);
    if (!m || m[2] !== host) return false;
    const pid = Number(m[1]);
    if (pid === process.pid) return false;
    try {
      process.kill(pid, 0);
      return false;
    } catch (err) {
      // EPERM: the process exists (another user's): it may be a worker.
      return (err as NodeJS.ErrnoException).code === 'ESRCH';
    }
  });
}

function describePublished(p: PolicyPublished, sha: string, queue: string, ended: boolean): string {
  const digest = `policy_sha256 ${sha.slice(0, 12)}...`;
  if (!p.changed) return `version ${p.version} on task queue ${queue} (${digest})`;
  const prev = p.previous!;
  const replaced =
    `version ${p.version} on task queue ${queue} (${digest}); it replaces version ${prev.version} ` +
    `(${prev.source}, "${prev.name}", published ${prev.last_published_at})`;
  return ended
    ? `${replaced}, whose workers have stopped`
    : `${replaced}: if another workflow worker still runs with that one, the two judge alike proposals differently`;
}
