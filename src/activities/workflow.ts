import type { Client } from '@temporalio/client';
import type { Logger } from '../contracts/logger';
import type { CompliancePolicy } from '../contracts/policy';
import { durationMs } from '../contracts/policy';
import { AgentJudgeError, DeliveryRefusedError } from '../contracts/errors';
import type { EscalationNotifier } from '../escalation/notifier';
import {
  GRANT_WORKFLOW_TYPE,
  grantWorkflowId,
  PROPOSAL_WORKFLOW_TYPE,
  SA,
  type TaskQueues,
  useGrantUpdate,
} from '../names';
import { issueCapability, type CapabilityKey } from '../identity/capability-key';
import {
  capabilityRequestFor,
  policyDigest,
  type CapabilityRequest,
  type IssuedCapability,
} from '../contracts/capability';
import { capabilityTtlMs, executesOnPolicyAlone, tierFor } from '../policy/classify';
import type { LiveGrants } from './live-grants';
import type { ApproverPasskeys } from '../contracts/passkey';
import { withPasskeys } from '../identity/passkey-registry';
import type { RejectionInput, WorkflowActivities } from './types';

export interface WorkflowActivityDeps {
  policy: CompliancePolicy;
  taskQueues: TaskQueues;
  /** Action types the executor worker performs (see PolicySnapshot.executable). */
  executable: string[];
  notifiers: EscalationNotifier[];
  /** Used to count recent rejections through visibility (the audit flag). */
  client: Client;
  logger: Logger;
  /** The key capability tokens are signed with; only the workflow worker holds it. */
  capabilityKey?: CapabilityKey;
  /** The index of live grants (docs/grants.md); without one, no proposal looks for a grant. */
  grants?: LiveGrants;
  /** The approvers' passkeys from the registry file (AGENT_JUDGE_PASSKEYS), merged into each snapshot's policy. */
  passkeys?: () => ApproverPasskeys;
}

/** Activities of the workflow worker: policy snapshot, escalation notices, audit bookkeeping. */
export function createWorkflowActivities(deps: WorkflowActivityDeps): WorkflowActivities {
  const { logger } = deps;

  /**
   * Runs every notifier; one failing channel does not silence the others, but is retried. When
   * every failure is permanent (a refused delivery), a retry would fail the same way: it is not.
   */
  async function each<T>(what: string, fn: (n: EscalationNotifier) => Promise<T>): Promise<T[]> {
    const results = await Promise.allSettled(deps.notifiers.map(fn));
    const reasons = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    const failed = results.flatMap((r, i) =>
      r.status === 'rejected' ? [`${deps.notifiers[i]!.name}: ${String(r.reason)}`] : [],
    );
    if (failed.length > 0) {
      const message = `${what} failed: ${failed.join('; ')}`;
      if (reasons.every((e) => e instanceof AgentJudgeError && !e.retryable)) throw new DeliveryRefusedError(message);
      throw new Error(message);
    }
    return results.map((r) => (r as PromiseFulfilledResult<T>).value);
  }

  /** Signs one approved action's token with the worker's key (never handed to workflow code). */
  function sign(request: CapabilityRequest): IssuedCapability {
    // createWorkers refuses to start a workflow worker without a key; this is a broken invariant.
    if (!deps.capabilityKey) throw new Error('this workflow worker has no capability key (AGENT_JUDGE_CAPABILITY_KEY)');
    const issued = issueCapability(request, deps.capabilityKey);
    logger.info(
      {
        event: 'capability.issued',
        workflow_id: request.workflow_id,
        token_id: issued.claims.jti,
        aud: issued.claims.aud,
      },
      'capability token issued',
    );
    return issued;
  }

  const grantable = (actionType: string) => deps.policy.spec.grants.tiers.includes(tierFor(deps.policy, actionType));

  // The policy is fixed for the worker's life: its digest is computed once here, not in every proposal run.
  let policySha256: string | undefined;
  return {
    policySnapshot(run) {
      const digest = (policySha256 ??= policyDigest(deps.policy));
      // A proposal the policy alone approves (the workflow decides the same way, with the same function) gets its
      // token now: one local activity, one workflow activation fewer per run. Nothing is signed for any other.
      const early =
        run && deps.capabilityKey && executesOnPolicyAlone(deps.policy, run.proposal)
          ? sign(capabilityRequestFor(run.workflow_id, run.proposal, digest, capabilityTtlMs(deps.policy)))
          : undefined;
      // Grants only for what the policy alone does not approve (a use is never spent on it), in a tier grants may
      // cover: an in-memory lookup, no round trip.
      const candidates =
        run && !early && deps.grants && deps.grants.size > 0 && grantable(run.proposal.action_type)
          ? deps.grants.candidates(run.proposal)
          : [];
      return Promise.resolve({
        // Passkeys enrolled since the worker started sign decisions on the proposals started from now on. They are
        // identities, not rules: the policy digest (what capability tokens bind) stays the policy file's.
        policy: deps.passkeys ? withPasskeys(deps.policy, deps.passkeys()) : deps.policy,
        taskQueues: deps.taskQueues,
        executable: deps.executable,
        policy_sha256: digest,
        ...(early ? { capability: early } : {}),
        ...(candidates.length > 0 ? { grant_candidates: candidates } : {}),
      });
    },

    async grantPolicySnapshot(run) {
      const { count } = await deps.client.workflow.count(
        `WorkflowType = '${GRANT_WORKFLOW_TYPE}' AND WorkflowId = '${run.workflow_id}' ` +
          `AND ExecutionStatus != 'Running'`,
      );
      // The grant's approver may sign with a passkey enrolled since the worker started (docs/inbox.md).
      return { policy: deps.passkeys ? withPasskeys(deps.policy, deps.passkeys()) : deps.policy, earlierRuns: count };
    },

    async useGrant(input) {
      try {
        return await deps.client.workflow
          .getHandle(grantWorkflowId(input.grant_id))
          .executeUpdate(useGrantUpdate, { args: [input.use] });
      } catch (err) {
        // Refused (expired, used up, revoked, not covering), closed or unreachable: the proposal goes on as usual.
        logger.info(
          {
            event: 'grant.refused',
            grant_id: input.grant_id,
            workflow_id: input.use.workflow_id,
            err: (err as Error).message,
          },
          'grant not used',
        );
        return null;
      }
    },

    async announceEscalation(notice) {
      logger.warn(
        {
          event: 'escalation',
          workflow_id: notice.workflow_id,
          proposal_id: notice.proposal.proposal_id,
          agent_id: notice.proposal.agent_id,
          action_type: notice.proposal.action_type,
          tier: notice.tier,
          deadline: notice.deadline,
          approvers: notice.approvers,
        },
        `proposal ${notice.proposal.proposal_id} awaits a human decision: ` +
          `agent-judge decide ${notice.proposal.proposal_id} approve|reject --approver <id>`,
      );
      const refs = await each('announce', (n) => n.announce(notice));
      return refs.flat();
    },

    async announceReminder(reminder) {
      logger.warn(
        { event: 'escalation.reminder', workflow_id: reminder.notice.workflow_id },
        'escalation still waiting for a decision',
      );
      await each('remind', (n) => n.remind(reminder));
    },

    async announceResolution(resolution) {
      logger.info(
        { event: 'escalation.resolved', workflow_id: resolution.workflow_id, status: resolution.status },
        'escalation resolved',
      );
      await each('resolve', (n) => n.resolve(resolution));
    },

    async announceUncertainExecution(notice) {
      logger.warn(
        {
          event: 'escalation.uncertain_execution',
          workflow_id: notice.workflow_id,
          proposal_id: notice.proposal.proposal_id,
          action_type: notice.proposal.action_type,
          error: notice.execution.error,
        },
        `proposal ${notice.proposal.proposal_id}: execution uncertain; ${notice.explanation}`,
      );
      await each('uncertain', (n) => n.uncertain?.(notice) ?? Promise.resolve());
    },

    async announceGrant(notice) {
      // Best effort: the grant is live whatever the channels say, so a channel that fails is logged, not retried.
      const results = await Promise.allSettled(deps.notifiers.map((n) => n.granted?.(notice) ?? Promise.resolve()));
      results.forEach((r, i) => {
        if (r.status === 'rejected')
          logger.warn(
            { event: 'grant.announce_failed', grant_id: notice.grant_id, notifier: deps.notifiers[i]!.name },
            `could not show grant ${notice.grant_id} on ${notice.origin_workflow_id}: ${String(r.reason)}`,
          );
      });
    },

    issueCapability(request) {
      return Promise.resolve(sign(request));
    },

    async recordRejection(input: RejectionInput) {
      const { repeatRejections, window } = deps.policy.spec.audit;
      const since = new Date(Date.now() - durationMs(window)).toISOString();
      const query =
        `WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}' AND ${SA.Target.name} = '${input.target}' AND ` +
        `${SA.Verdict.name} = 'REJECT' AND StartTime > '${since}' AND WorkflowId != '${input.workflow_id}'`;
      const { count } = await deps.client.workflow.count(query);
      const recent = count + 1;
      const flag = recent >= repeatRejections;
      if (flag) {
        logger.warn(
          { event: 'audit.flag', target: input.target, recent, window },
          `audit flag: ${recent} rejections on ${input.target} within ${window}`,
        );
      }
      return { recent, flag };
    },
  };
}
