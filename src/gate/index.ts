/**
 * `agent-judge/gate`: one gate for every runtime that lets an agent call tools (the MCP proxy, coding-agent hooks,
 * agent frameworks). A runtime hands it each tool call; the gate maps the call to a proposal by the policy's rules,
 * submits it (or finds the identical call's proposal), holds it while a judge or a person decides, leases an approval
 * to exactly one performer and takes the outcome back. Its answers are data (`GateAnswer`); each runtime renders them
 * in its own format. Contract for adapter authors: docs/gate.md.
 */
import { DEFAULT_TASK_QUEUES } from '../wire-names';
import { LimitExceededError } from '../contracts/errors';
import { refusalError } from '../contracts/refusal';
import { mapToolCall, proposalForToolCall, toolCallDigest } from './mapping';
import { callerOutcomeOf, resolveCall, unreachableReason } from './resolve';
import { reportCallerOutcome } from '../client/performer';
import { describeChanges } from '../contracts/action-edit';
import type { GateAnswer, GateOptions, GateOutcome, GateToolCall, DecideOptions, Lease } from './types';

export type {
  AgentStatement,
  CallGate,
  DecideOptions,
  GateAnswer,
  GateOptions,
  GateOutcome,
  GatePerformer,
  GateRules,
  GateToolCall,
  Lease,
  PerformerLease,
  ProposalRef,
} from './types';
export {
  mapToolCall,
  matchRule,
  proposalForToolCall,
  toolCallDigest,
  unmappable,
  userTaskField,
  type CallMapping,
  type MatchedRule,
} from './mapping';

/** How long an identical call waits for the previous one's outcome to be recorded before it is resolved (ms). */
const REPORT_WAIT_MS = 5000;
/** Identical calls whose finished sequences the gate remembers (oldest dropped first). */
const REMEMBERED_CALLS = 10_000;

/**
 * A gate for one performer (one agent, one redeemer name). Keep one per process and runtime: it remembers, per exact
 * call, how many identical calls finished (so the n-th costs one step) and waits for an identical call's outcome to be
 * recorded before it resolves the next.
 */
export class Gate {
  private readonly finishedBelow = new Map<string, number>();
  private readonly reporting = new Map<string, Promise<void>>();

  constructor(private readonly options: GateOptions) {}

  /**
   * What to do with one call. Never throws for the call's own sake: bad input, a mapping error and agent-judge out of
   * reach are `refused` answers (never `forward`). Only a `forward` with a lease may be performed, exactly once.
   */
  async decide(call: GateToolCall, opts: DecideOptions = {}): Promise<GateAnswer> {
    const { client } = this.options;
    let mapping = mapToolCall(this.options.rules, call);
    if (this.options.refine) {
      try {
        mapping = await this.options.refine(mapping, call);
      } catch (err) {
        return {
          kind: 'refused',
          reason: `agent-judge could not read this call: ${(err as Error).message}`,
          proposal: null,
        };
      }
    }
    if (mapping.kind === 'refused') return { kind: 'refused', reason: mapping.refusal.reason, proposal: null };
    if (mapping.kind === 'no-judge') {
      return { kind: 'forward', rule: mapping.rule.name, lease: null, arguments: call.arguments };
    }

    const digest = toolCallDigest(call);
    // Values that entered the session from untrusted content, in a consequential call (docs/provenance.md).
    const provenance = this.options.provenance?.provenanceOf(this.options.performer.agentId, call, mapping.actionType);
    const proposalAt = (sequence: number) => {
      const p = proposalForToolCall({
        agentId: this.options.performer.agentId,
        call,
        callDigest: digest,
        mapping,
        agent: call.agent ?? {},
        sequence,
        ...(provenance ? { provenance } : {}),
      });
      if (!p.ok) throw refusalError(p.refusal, `rule ${mapping.rule.name} maps this call to an invalid proposal: `);
      return p.value;
    };
    try {
      proposalAt(0);
    } catch (err) {
      return { kind: 'refused', reason: (err as Error).message, proposal: null };
    }
    // The identical call just performed is still being recorded: wait for that, or this call would find it leased
    // without an outcome and be refused. Bounded: with Temporal out of reach the walk then answers from the record.
    const recording = this.reporting.get(digest);
    if (recording) await settledWithin(recording, REPORT_WAIT_MS);
    const signal = opts.signal ?? new AbortController().signal;
    try {
      const resolution = await resolveCall(
        {
          client,
          taskQueue: this.options.taskQueue ?? DEFAULT_TASK_QUEUES.workflow,
          limits: this.options.limits,
          holdMs: Math.min(opts.holdMs ?? this.options.holdMs, this.options.holdMs),
          pollMs: this.options.pollMs,
          ...(this.options.leaseWindowMs !== undefined ? { leaseWindowMs: this.options.leaseWindowMs } : {}),
          redeemer: this.options.performer.redeemer,
          signal,
          firstSequence: this.finishedBelow.get(digest),
          onFinished: (next) => this.rememberFinished(digest, next),
          onHeld: opts.onHeld,
          ...(opts.onProposal ? { onProposal: opts.onProposal } : {}),
          ...(opts.sequence !== undefined ? { onlySequence: opts.sequence } : {}),
        },
        proposalAt,
        call.agent ?? {},
      );
      if (resolution.kind !== 'forward') return resolution.kind === 'cancelled' ? resolution : resolution.answer;
      const lease = this.lease(digest, resolution.status);
      if (lease.edited && this.options.appliesEdits === false) return refuseEdited(lease, call.runtime);
      return { kind: 'forward', rule: mapping.rule.name, lease, arguments: lease.edited?.arguments ?? call.arguments };
    } catch (err) {
      if (signal.aborted) return { kind: 'cancelled' };
      // A per-agent limit: its own words (which limit, when it resets), not "could not judge".
      if (err instanceof LimitExceededError) return { kind: 'refused', reason: err.message, proposal: null };
      return { kind: 'refused', reason: unreachableReason(err, client), proposal: null };
    }
  }

  /**
   * A performed call's result, as the runtime saw it come back: recorded in the call's session when its source is
   * untrusted (`spec.provenance`), and scanned. Never changes the result; without provenance configured, nothing.
   */
  recordResult(call: Pick<GateToolCall, 'runtime' | 'server' | 'tool' | 'session'>, result: unknown): void {
    this.options.provenance?.recordResult(
      {
        agentId: this.options.performer.agentId,
        runtime: call.runtime,
        server: call.server,
        tool: call.tool,
        ...(call.session?.sessionId ? { sessionId: call.session.sessionId } : {}),
      },
      result,
    );
  }

  private lease(digest: string, status: Lease['status']): Lease {
    const { client } = this.options;
    const workflowId = status.workflow_id;
    const sequence = status.proposal.performer?.sequence;
    let reported = false;
    return {
      proposalId: status.proposal_id,
      workflowId,
      verdict: status.verdict,
      performer: this.options.performer.redeemer,
      status,
      edited: editedCall(status),
      report: async (outcome: GateOutcome, detail?: string) => {
        if (reported) throw new Error(`the lease on ${workflowId} was already reported`);
        reported = true;
        const recording = reportCallerOutcome(client, workflowId, callerOutcomeOf(outcome, detail)).then(() => {
          // Recorded, the proposal is finished for good: the next identical call starts right after it instead of
          // finding that out first (a duplicate start, a describe and a result: about one proposal's time).
          if (sequence !== undefined) this.rememberFinished(digest, sequence + 1);
        });
        const settled = recording.catch(() => undefined);
        this.reporting.set(digest, settled);
        try {
          await recording;
        } finally {
          if (this.reporting.get(digest) === settled) this.reporting.delete(digest);
        }
      },
    };
  }

  private rememberFinished(digest: string, next: number): void {
    if ((this.finishedBelow.get(digest) ?? 0) >= next) return;
    this.finishedBelow.delete(digest); // re-inserted last: the oldest entry is the one dropped when full
    this.finishedBelow.set(digest, next);
    if (this.finishedBelow.size > REMEMBERED_CALLS) this.finishedBelow.delete(this.finishedBelow.keys().next().value!);
  }
}

/** The edited arguments and changes of a call a person approved with edits (an unmapped tool call's), or null. */
function editedCall(status: Lease['status']): Lease['edited'] {
  const e = status.edited;
  if (!e) return null;
  const args = e.proposal.parameters.arguments;
  return { arguments: (args ?? {}) as Record<string, unknown>, changes: e.changes };
}

/**
 * A call a person approved only with edits, for a runtime that cannot change a tool's input: recorded not performed
 * (the lease given back), and answered `refused` with the edits, so the agent can call again as edited.
 */
async function refuseEdited(lease: Lease, runtime: string): Promise<GateAnswer> {
  const edits = describeChanges(lease.edited!.changes);
  const ref = { proposalId: lease.proposalId, workflowId: lease.workflowId, verdict: lease.verdict };
  try {
    await lease.report('not_performed', `approved with edits ${runtime} cannot apply`);
  } catch {
    // Unrecorded, the proposal's deadline records "forwarded, no outcome"; the call is refused all the same.
  }
  return {
    kind: 'refused',
    reason:
      `a person approved this call only with edits (${edits}), and ${runtime} cannot change a tool's input, so it ` +
      'was not run; call the tool again as edited',
    proposal: ref,
  };
}

/** Resolves when `p` settles or after `ms`, whichever comes first; never rejects. */
function settledWithin(p: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    p.then(
      () => undefined,
      () => undefined,
    ).finally(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A gate for one performer (see {@link Gate}). */
export function createGate(options: GateOptions): Gate {
  return new Gate(options);
}
