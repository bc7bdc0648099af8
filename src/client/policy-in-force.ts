/**
 * Publishing and reading the policy in force (src/contracts/policy-in-force.ts). The workflow worker publishes once
 * at start, an Update-with-Start on the small policy workflow of its task queue; other processes read that
 * workflow's memo (`describe`: the server answers, no worker needed) at start and again at most every
 * {@link REFRESH_MS} while they run. A proposal never pays for any of this: the workflow worker judges with the
 * policy it holds in memory, as before.
 */
import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import type { Logger } from '../contracts/logger';
import type { PolicyInForce, PolicyPublication, PolicyPublished } from '../contracts/policy-in-force';
import { POLICY_IN_FORCE_WORKFLOW_TYPE, POLICY_MEMO_KEY, policyInForceWorkflowId, publishPolicyUpdate } from '../names';
import { comparePolicies, type OwnPolicy, type PolicyAgreement } from '../policy/agreement';

/** How stale a long-running process lets its view of the workers' policy get before reading it again. */
export const REFRESH_MS = 30_000;
/** A read that takes longer than this counts as "cannot tell" rather than holding anything up. */
const READ_TIMEOUT_MS = 5_000;

/** Publishes the policy a workflow worker judges with; starts the policy workflow of its queue if needed. */
export async function publishPolicy(
  client: Client,
  workflowTaskQueue: string,
  publication: PolicyPublication,
): Promise<PolicyPublished> {
  const startWorkflowOperation = new WithStartWorkflowOperation(POLICY_IN_FORCE_WORKFLOW_TYPE, {
    workflowId: policyInForceWorkflowId(workflowTaskQueue),
    taskQueue: workflowTaskQueue,
    args: [{}],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
  });
  return client.workflow.executeUpdateWithStart(publishPolicyUpdate, {
    args: [publication],
    startWorkflowOperation,
  });
}

/** True when `v` has the shape of the record (the memo is read from the server: checked before use). */
function isRecord(v: unknown): v is PolicyInForce {
  const r = v as PolicyInForce | null;
  return (
    r !== null &&
    typeof r === 'object' &&
    typeof r.current?.document_sha256 === 'string' &&
    typeof r.current.policy_sha256 === 'string' &&
    typeof r.current.version === 'number' &&
    Array.isArray(r.versions)
  );
}

/** The record of the workers on `workflowTaskQueue`, or null when none has published (or it is not ours). */
export async function readPolicyInForce(client: Client, workflowTaskQueue: string): Promise<PolicyInForce | null> {
  try {
    const handle = client.workflow.getHandle(policyInForceWorkflowId(workflowTaskQueue));
    const description = await client.withDeadline(Date.now() + READ_TIMEOUT_MS, () => handle.describe());
    // Anyone with namespace access can start a workflow under this id: only ours, on this queue, counts.
    if (description.type !== POLICY_IN_FORCE_WORKFLOW_TYPE || description.taskQueue !== workflowTaskQueue) return null;
    const memo = description.memo?.[POLICY_MEMO_KEY];
    return isRecord(memo) ? memo : null;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}

/**
 * A long-running process's view of whether its policy is the workers': it says so at start, and again on every call
 * it serves while the two differ (MCP proxy, Discord bot), reading the record again when it is older than
 * {@link REFRESH_MS} (in the background: a call never waits for it).
 */
export class PolicyWatch {
  private agreement: PolicyAgreement | null = null;
  private readAt = 0;
  private reading: Promise<void> | null = null;

  constructor(
    private readonly o: {
      client: Client;
      taskQueue: string;
      mine: OwnPolicy;
      /** The process's logger: info when the policies are the same, warn when they differ or cannot be compared. */
      logger: Logger;
      now?: () => number;
    },
  ) {}

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  /** Reads the record and says where this process stands. Never throws: a failed read is reported as such. */
  async start(): Promise<PolicyAgreement> {
    await this.read(true);
    return this.agreement!;
  }

  /** The last comparison (null before {@link start}). */
  get current(): PolicyAgreement | null {
    return this.agreement;
  }

  private read(announce: boolean): Promise<void> {
    this.reading ??= (async () => {
      let next: PolicyAgreement;
      try {
        next = comparePolicies(this.o.mine, await readPolicyInForce(this.o.client, this.o.taskQueue), this.o.taskQueue);
      } catch (err) {
        next = {
          state: 'unknown',
          differences: [],
          message:
            `could not read the workers' policy on ${this.o.taskQueue} (${(err as Error).message}): ` +
            `cannot tell whether ${this.o.mine.source} is the policy in force`,
        };
      }
      const changed =
        this.agreement?.state !== next.state ||
        this.agreement?.version !== next.version ||
        this.agreement?.policy_sha256 !== next.policy_sha256;
      this.agreement = next;
      this.readAt = this.now();
      if (announce || changed) {
        const fields = { task_queue: this.o.taskQueue, state: next.state, version: next.version };
        if (next.state === 'same') this.o.logger.info(fields, next.message);
        else this.o.logger.warn(fields, next.message);
      }
    })().finally(() => (this.reading = null));
    return this.reading;
  }

  /** One call served: repeats the warning while the policies differ; refreshes a stale view in the background. */
  onCall(what: string): void {
    if (this.now() - this.readAt > REFRESH_MS) void this.read(false);
    const a = this.agreement;
    if (a?.state === 'differs') {
      const fields = a.differences.slice(0, 5).join(', ');
      this.o.logger.warn(
        { task_queue: this.o.taskQueue, state: a.state, version: a.version, differences: a.differences },
        `WARNING: ${what} is judged under the workers' policy (version ${a.version}, policy_sha256 ` +
          `${a.policy_sha256?.slice(0, 12)}...), not ${this.o.mine.source}; differing: ${fields}` +
          `${a.differences.length > 5 ? `, and ${a.differences.length - 5} more` : ''}`,
      );
    }
  }
}
