/**
 * `/v1/proposals`: seed-format proposals (seed 000 §3.1) submitted and followed over HTTP, for agents whose actions
 * agent-judge's own executor performs. The agent id is the token's: a proposal that names another agent is refused,
 * one that names none is given the token's, and an agent sees and clarifies only its own proposals. Every wait is
 * bounded (`wait_ms`): after it the answer is the proposal as it stands, with 202.
 */
import type { Client } from '@temporalio/client';
import { BadInputError, NotFoundError } from '../../contracts/errors';
import type { CompliancePolicy } from '../../contracts/policy';
import { outcomeOf, type ProposalOutcome } from '../../contracts/status';
import { clarify, getStatus, submitProposal, waitUntilSettled } from '../../client/proposals';

export interface ProposalDeskOptions {
  client: Client;
  taskQueue: string;
  policy: CompliancePolicy;
}

/** An answer and whether the proposal had settled (finished, or waiting on a person or the agent) within the wait. */
export interface Followed {
  outcome: ProposalOutcome;
  settled: boolean;
}

export class ProposalDesk {
  constructor(private readonly o: ProposalDeskOptions) {}

  /** Submits `body` as `agent`'s proposal; waits up to `waitMs` for it to settle. */
  async submit(agent: string, body: unknown, waitMs: number): Promise<Followed> {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new BadInputError('proposal: expected a JSON object (seed 000 §3.1)');
    }
    const named = (body as { agent_id?: unknown }).agent_id;
    if (named !== undefined && named !== agent) {
      throw new ForbiddenError(
        `proposal.agent_id: ${JSON.stringify(named)} is not the agent this token belongs to (${agent}); ` +
          'leave agent_id out, the token decides it',
      );
    }
    const { workflow_id } = await submitProposal(
      this.o.client,
      { ...body, agent_id: agent },
      { taskQueue: this.o.taskQueue, limits: { policy: this.o.policy } },
    );
    return this.follow(workflow_id, waitMs);
  }

  /** `agent`'s proposal `id` (proposal_id or workflow id), waiting up to `waitMs` for it to settle. */
  async get(agent: string, id: string, waitMs: number): Promise<Followed> {
    const workflowId = await this.own(agent, id);
    return this.follow(workflowId, waitMs);
  }

  /** The agent's answer to a CLARIFY on its own proposal. */
  async clarify(agent: string, id: string, body: unknown): Promise<Followed> {
    const workflowId = await this.own(agent, id);
    const outcome = await clarify(this.o.client, workflowId, body);
    return { outcome, settled: outcome.status !== 'pending' };
  }

  /** The workflow id of the agent's own proposal; another agent's reads as not found. */
  private async own(agent: string, id: string): Promise<string> {
    const status = await getStatus(this.o.client, id);
    if (status.proposal.agent_id !== agent) throw new NotFoundError(`no proposal with id ${id}`);
    return status.workflow_id;
  }

  private async follow(workflowId: string, waitMs: number): Promise<Followed> {
    const settling = waitUntilSettled(this.o.client, workflowId).then((outcome) => ({ outcome, settled: true }));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), waitMs);
    });
    try {
      const first = await Promise.race([settling, timedOut]);
      if (first) return first;
    } finally {
      clearTimeout(timer);
    }
    settling.catch(() => undefined); // still running on the server; nobody waits for it here
    return { outcome: outcomeOf(await getStatus(this.o.client, workflowId)), settled: false };
  }
}

/** A request the token's agent may not make (it named another agent). */
export class ForbiddenError extends BadInputError {}
