/**
 * `POST /v1/calls` and `POST /v1/calls/{id}/outcome`: tool calls decided for agents that reach agent-judge over HTTP
 * (the framework adapters, the Python package, any language). One in-process {@link Gate} per agent and runtime does
 * the deciding, with the agent's limits always applied; this module only turns its answer into data and keeps each
 * leased approval until its performer reports, so the agent's process never holds a Temporal client or names itself.
 */
import type { GateProvenance } from '../provenance';
import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { NotFoundError } from '../../contracts/errors';
import type { CompliancePolicy } from '../../contracts/policy';
import type { Logger } from '../../contracts/logger';
import { Gate, type GateAnswer, type GateToolCall, type Lease } from '..';
import { editedText, modelText } from '../texts';
import type { CallAnswer, CallRequest, OutcomeRequest } from './api';

/** Leases waiting for their outcome, at most (the oldest is dropped first: its proposal then ends uncertain). */
const MAX_LEASES = 10_000;

export interface CallDeskOptions {
  client: Client;
  taskQueue: string;
  policy: CompliancePolicy;
  /** The longest hold (ms): `spec.hooks.holdFor`. A request may ask for less. */
  holdMs: number;
  /** How long a lease waits for its outcome (ms): `spec.mcp.performWithin`. */
  performMs: number;
  logger: Logger;
  /** Provenance through sessions (docs/provenance.md), shared with the hooks' gates. */
  provenance?: GateProvenance;
}

interface HeldLease {
  agent: string;
  lease: Lease;
  timer: NodeJS.Timeout;
  reportBy: string;
}

/** The gate service's desk for tool calls: decides them through the agents' gates, holds their leases. */
export class CallDesk {
  private readonly gates = new Map<string, Gate>();
  private readonly leases = new Map<string, HeldLease>();

  constructor(private readonly o: CallDeskOptions) {}

  /** Decides one call for `agent` (from its token, never from the body). */
  async decide(agent: string, request: CallRequest, signal: AbortSignal): Promise<CallAnswer | null> {
    const call: GateToolCall = {
      runtime: request.runtime,
      server: request.server,
      tool: request.tool,
      arguments: request.arguments,
      ...(request.tool_definition_hash ? { toolDefinitionHash: request.tool_definition_hash } : {}),
      ...(request.agent ? { agent: request.agent } : {}),
      ...(request.user_task !== undefined ? { userTask: request.user_task } : {}),
      ...(request.session_id || request.call_id
        ? {
            session: {
              ...(request.session_id ? { sessionId: request.session_id } : {}),
              ...(request.call_id ? { callId: request.call_id } : {}),
            },
          }
        : {}),
    };
    const answer = await this.gateFor(agent, request.runtime).decide(call, {
      signal,
      ...(request.hold_ms !== undefined ? { holdMs: request.hold_ms } : {}),
    });
    if (answer.kind === 'cancelled') return null;
    return this.answerOf(agent, answer);
  }

  /** Records the outcome of a lease this agent holds. */
  async report(agent: string, id: string, outcome: OutcomeRequest): Promise<{ proposal_id: string }> {
    const held = this.leases.get(id);
    // Another agent's lease reads as unknown: nothing about it is revealed.
    if (!held || held.agent !== agent) {
      throw new NotFoundError(`no lease ${id} of this agent waits for an outcome (reported already, or expired)`);
    }
    this.leases.delete(id);
    clearTimeout(held.timer);
    await held.lease.report(outcome.outcome, outcome.detail);
    return { proposal_id: held.lease.proposalId };
  }

  /** Stops: leases left are never reported (their proposals record "forwarded, no outcome" at their deadline). */
  close(): void {
    for (const held of this.leases.values()) clearTimeout(held.timer);
    this.leases.clear();
  }

  private gateFor(agent: string, runtime: string): Gate {
    const key = `${agent}|${runtime}`;
    let gate = this.gates.get(key);
    if (!gate) {
      gate = new Gate({
        client: this.o.client,
        taskQueue: this.o.taskQueue,
        // Every agent's limits, whatever client it uses: checked here, not by the agent's own choice.
        limits: { policy: this.o.policy },
        rules: this.o.policy.spec.mcp,
        performer: { agentId: agent, redeemer: `api:${runtime}` },
        holdMs: this.o.holdMs,
        ...(this.o.provenance ? { provenance: this.o.provenance } : {}),
      });
      this.gates.set(key, gate);
    }
    return gate;
  }

  private answerOf(agent: string, a: Exclude<GateAnswer, { kind: 'cancelled' }>): CallAnswer {
    switch (a.kind) {
      case 'forward': {
        if (!a.lease) return { kind: 'forward', rule: a.rule, arguments: a.arguments, lease: null, text: null };
        const { id, reportBy } = this.hold(agent, a.lease);
        const edited = a.lease.edited;
        return {
          kind: 'forward',
          rule: a.rule,
          arguments: a.arguments,
          lease: {
            id,
            proposal_id: a.lease.proposalId,
            workflow_id: a.lease.workflowId,
            verdict: a.lease.verdict,
            edits: edited ? edited.changes.map((c) => ({ ...c })) : null,
            report_by: reportBy,
          },
          text: edited ? editedText(edited.changes) : null,
        };
      }
      case 'deny':
        return { kind: 'deny', reason: a.reason, recorded: a.recorded, ...ref(a), text: modelText(a)! };
      case 'clarify':
        return {
          kind: 'clarify',
          reason: a.reason,
          rounds_left: a.roundsLeft,
          deadline: a.deadline,
          ...ref(a),
          text: modelText(a)!,
        };
      case 'pending':
        return {
          kind: 'pending',
          waiting_for: a.waitingFor,
          status: a.status,
          deadline: a.deadline,
          retry_after_ms: a.retryAfterMs,
          ...ref(a),
          text: modelText(a)!,
        };
      case 'refused':
        return {
          kind: 'refused',
          reason: a.reason,
          proposal_id: a.proposal?.proposalId ?? null,
          workflow_id: a.proposal?.workflowId ?? null,
          text: modelText(a)!,
        };
    }
  }

  private hold(agent: string, lease: Lease): { id: string; reportBy: string } {
    const id = `lease_${randomBytes(16).toString('base64url')}`;
    const reportBy = new Date(Date.now() + this.o.performMs).toISOString();
    const timer = setTimeout(() => this.leases.delete(id), this.o.performMs);
    timer.unref();
    this.leases.set(id, { agent, lease, timer, reportBy });
    if (this.leases.size > MAX_LEASES) {
      const [oldest] = this.leases.keys();
      if (oldest !== undefined) {
        clearTimeout(this.leases.get(oldest)!.timer);
        this.leases.delete(oldest);
        this.o.logger.warn({ lease: oldest }, 'too many leases waiting for an outcome: the oldest was dropped');
      }
    }
    return { id, reportBy };
  }
}

function ref(a: { proposalId: string; workflowId: string; verdict: Lease['verdict'] }) {
  return { proposal_id: a.proposalId, workflow_id: a.workflowId, verdict: a.verdict };
}
