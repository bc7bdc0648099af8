/**
 * One judged call against its proposal workflow: start it (or find the identical call's proposal), hold while a slow
 * judge or a person decides, clarify it with the re-issued call's agent statement, and lease the approved call to
 * exactly one performer. The answer is data (src/gate/types.ts): `forward` (the lease is taken: perform once, then
 * report), or why not. Nothing here performs anything. Every Temporal call goes through src/client/.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { AgentJudgeError, BadInputError, DuplicateProposalError } from '../contracts/errors';
import type { ProposalOutcome, ProposalRecord } from '../contracts/status';
import type { CallerOutcome } from '../contracts/caller-outcome';
import { proposalWorkflowId } from '../contracts/digest';
import { capabilityBinding, type SettleLease } from '../contracts/capability';
import type { Proposal } from '../contracts/proposal';
import { MCP_TOOL_CALL, TOOL_CALL } from '../contracts/mcp';
import { clarify, RefusedError, submitAndSettle, waitUntilSettled } from '../client/proposals';
import type { SubmissionLimits } from '../client/limits';
import { CapabilityRefusedError, redeemCapability } from '../client/capabilities';
import { reportCallerOutcome, runState, statusOfRun } from '../client/performer';
import { grpcCode, GrpcStatus } from '../client/grpc';
import type { AgentStatement, GateAnswer, GateOutcome, ProposalRef } from './types';

/** The action types of calls no rule maps: their arguments are the action, so an edit to them can be performed. */
const UNMAPPED_TOOL_CALLS: readonly string[] = [MCP_TOOL_CALL, TOOL_CALL];

/** The most identical calls one proposal chain follows before refusing (each finished call is one step). */
export const MAX_CALL_SEQUENCE = 10_000;
/** Runs of one call that ended without a decision (terminated, failed) skipped before the call is refused. */
const MAX_BROKEN_RUNS = 3;
/**
 * A fresh proposal's settling Update leases an approval only if it is decided within this long of the call (the
 * policy, the patterns, the rules: the decisions where one round trip more would show). A lease nobody performs is
 * recorded at once when the gate is still there to see it (a cancelled call), but a performer that dies holding it
 * leaves it to the deadline, where it reads "forwarded, no outcome": keeping the window short keeps that case rare. A
 * slower decision (a model, a person) is redeemed and leased by one Update after it, a round trip lost in its seconds.
 */
export const LEASE_WINDOW_MS = 2000;
/** ... and only if it comes this long before the hold ends (at most half the hold), so the gate still waits for it. */
const LEASE_MARGIN_MS = 1000;
/** What a `pending` answer suggests as the wait before the identical call is tried again. */
const RETRY_AFTER_MS = 5000;

/** The engine's answer: a gate answer whose `forward` carries the leased status, not yet a `Lease`. */
export type Resolution =
  | { kind: 'forward'; status: ProposalRecord }
  | { kind: 'answer'; answer: Exclude<GateAnswer, { kind: 'forward' } | { kind: 'cancelled' }> }
  | { kind: 'cancelled' };

export interface ResolveOptions {
  client: Client;
  taskQueue: string;
  /** The per-agent limits each new proposal is held to (src/client/limits.ts). */
  limits?: SubmissionLimits;
  holdMs: number;
  /** The redeemer the approval is leased to: exactly one performer. */
  redeemer: string;
  /** How soon after the call a decision is leased by its settling Update (default {@link LEASE_WINDOW_MS}). */
  leaseWindowMs?: number;
  /** Called about once a second while the call is held (progress notifications). */
  onHeld?: (what: string) => void;
  signal: AbortSignal;
  /** How often a held call looks at its proposal again while a person decides. */
  pollMs?: number;
  /**
   * Where the walk over identical calls starts: every sequence below it is known to be finished for good (the
   * caller remembers what `onFinished` told it for this call), so the n-th identical call costs one step, not n.
   */
  firstSequence?: number;
  /**
   * Told when the walk passes a decided, finished proposal with nothing but such proposals before it: every sequence
   * below `next` stays finished. Runs that ended without a decision are never passed over this way (each walk counts
   * them against MAX_BROKEN_RUNS).
   */
  onFinished?: (next: number) => void;
  /** See `DecideOptions.onProposal`. */
  onProposal?: (p: { workflowId: string; proposalId: string; sequence: number }) => boolean | void;
  /** See `DecideOptions.sequence`: this sequence only, never a later one. */
  onlySequence?: number;
}

/** The caller went away (its abort signal fired) while the call was held. */
class Cancelled extends AgentJudgeError {
  constructor() {
    super('the caller went away while the call was held');
  }
}

function abortable<T>(p: Promise<T>, signal: AbortSignal, deadline: number): Promise<T | 'held-too-long'> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Cancelled());
    const timer = setTimeout(() => done(() => resolve('held-too-long')), Math.max(0, deadline - Date.now()));
    const onAbort = () => done(() => reject(new Cancelled()));
    signal.addEventListener('abort', onAbort, { once: true });
    let settled = false;
    const done = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      f();
    };
    p.then(
      (v) => done(() => resolve(v)),
      (e: unknown) => done(() => reject(e instanceof Error ? e : new Error(String(e)))),
    );
  });
}

/** The proposal an answer is about, from a status or outcome. */
export function refOf(s: Pick<ProposalOutcome, 'proposal_id' | 'workflow_id' | 'verdict'>): ProposalRef {
  return { proposalId: s.proposal_id, workflowId: s.workflow_id, verdict: s.verdict };
}

/** REJECT: final; the identical call is refused again. */
function deny(s: Pick<ProposalOutcome, 'proposal_id' | 'workflow_id' | 'verdict'>, recorded: boolean): Resolution {
  return {
    kind: 'answer',
    answer: { kind: 'deny', reason: s.verdict?.reason ?? 'rejected', recorded, final: true, ...refOf(s) },
  };
}

function clarifyOf(s: ProposalRecord): Resolution {
  return {
    kind: 'answer',
    answer: {
      kind: 'clarify',
      reason: s.verdict?.reason ?? 'more information is needed',
      roundsLeft: Math.max(0, s.max_clarify_rounds - s.clarify_rounds),
      deadline: s.deadlines.clarification,
      ...refOf(s),
    },
  };
}

function held(s: ProposalRecord): Resolution {
  return {
    kind: 'answer',
    answer: {
      kind: 'pending',
      waitingFor: s.status === 'awaiting_human' ? 'human' : 'judge',
      status: s.status,
      deadline: s.deadlines.human ?? s.deadlines.clarification,
      retryAfterMs: RETRY_AFTER_MS,
      ...refOf(s),
    },
  };
}

function refused(reason: string, s?: Pick<ProposalOutcome, 'proposal_id' | 'workflow_id' | 'verdict'>): Resolution {
  return { kind: 'answer', answer: { kind: 'refused', reason, proposal: s ? refOf(s) : null } };
}

/**
 * Resolves one judged call. `proposalAt(sequence)` builds the call's proposal for each sequence number; the first
 * sequence whose proposal is not finished is the one this call belongs to (a finished legitimate call makes the
 * next identical call a new proposal; a rejected one stays refused).
 */
export async function resolveCall(
  options: ResolveOptions,
  proposalAt: (sequence: number) => Proposal,
  agent: AgentStatement,
): Promise<Resolution> {
  const { client, signal } = options;
  const deadline = Date.now() + options.holdMs;
  const ticker = options.onHeld ? setInterval(() => options.onHeld?.('held'), 1000) : undefined;
  let brokenRuns = 0;
  try {
    // Finished proposals stay finished and a rejected one is never passed, so starting past the known-finished ones
    // changes no answer: a rejected call stays refused, a finished approved one makes this call a new proposal.
    const first = options.onlySequence ?? options.firstSequence ?? 0;
    const end = options.onlySequence !== undefined ? options.onlySequence + 1 : MAX_CALL_SEQUENCE;
    for (let sequence = first; sequence < end; sequence++) {
      const proposal = proposalAt(sequence);
      const workflowId = proposalWorkflowId(proposal);
      const found = () => options.onProposal?.({ workflowId, proposalId: proposal.proposal_id, sequence });
      let fresh = true;
      let settled: ProposalRecord | null = null;
      // A fresh proposal that settles approved comes back already redeemed and leased to this call (one round
      // trip fewer before the performance); the nonce tells this call's lease from anybody else's.
      const leaseBefore = Math.min(
        Date.now() + (options.leaseWindowMs ?? LEASE_WINDOW_MS),
        deadline - Math.min(LEASE_MARGIN_MS, options.holdMs / 2),
      );
      const lease = settleLease(proposal, workflowId, leaseBefore, options.redeemer);
      const settling = submitAndSettle(client, proposal, {
        taskQueue: options.taskQueue,
        limits: options.limits,
        lease,
      });
      try {
        const started = await abortable(settling, signal, deadline);
        if (started === 'held-too-long') {
          releaseLateLease(client, settling, lease.nonce, workflowId, 'the hold had ended');
          const status = await statusOfRun(client, workflowId);
          found();
          return held(status);
        }
        settled = started.status;
      } catch (err) {
        if (err instanceof Cancelled)
          releaseLateLease(client, settling, lease.nonce, workflowId, 'the client cancelled');
        if (!(err instanceof DuplicateProposalError)) throw err;
        fresh = false;
        const run = await runState(client, workflowId);
        if (run.execution !== 'RUNNING' && run.execution !== 'COMPLETED') {
          // Failed, terminated or timed out without a decision: a few such runs are skipped; more is a fault that a
          // new proposal per call would only repeat.
          if (++brokenRuns > MAX_BROKEN_RUNS) {
            return refused(`the identical call's proposal ${workflowId} ended without a decision (${run.execution})`);
          }
          continue; // not remembered: every walk counts the broken runs it passes
        }
        if (run.execution === 'COMPLETED') {
          if (run.outcome?.status === 'rejected') return deny(run.outcome, true);
          if (brokenRuns === 0) options.onFinished?.(sequence + 1);
          continue; // finished (performed, failed, abandoned): the identical call now is a new proposal
        }
      }
      // The runtime may already follow this proposal for another call (an MCP task): then nothing more here.
      if (found() === false && !fresh) return { kind: 'cancelled' };
      const step = await follow(options, proposal, agent, deadline, fresh, settled, fresh ? lease.nonce : null);
      if (step === 'finished') {
        if (brokenRuns === 0) options.onFinished?.(sequence + 1);
        continue;
      }
      return step;
    }
    if (options.onlySequence !== undefined) {
      return refused(
        `the proposal of this call (sequence ${options.onlySequence}) is finished; it is not performed again`,
      );
    }
    return refused(`more than ${MAX_CALL_SEQUENCE} identical calls`);
  } catch (err) {
    if (err instanceof Cancelled) return { kind: 'cancelled' };
    throw err;
  } finally {
    if (ticker) clearInterval(ticker);
  }
}

/** Follows one open proposal until it asks for something, is decided, or the hold ends. */
async function follow(
  options: ResolveOptions,
  proposal: Proposal,
  agent: AgentStatement,
  deadline: number,
  fresh: boolean,
  /** The record the start's settling Update already returned: the first look needs no Query. */
  settled: ProposalRecord | null = null,
  /** The nonce of the lease that Update carried: a redemption under it is this call's lease. */
  leaseNonce: string | null = null,
): Promise<Resolution | 'finished'> {
  const { client, signal } = options;
  const workflowId = proposalWorkflowId(proposal);
  let clarified = fresh; // a fresh proposal already carries this call's agent statement
  let judgedHere = fresh; // this call started or clarified the proposal: its REJECT is news, not a record
  let known = settled;
  for (;;) {
    const record = known ?? (await statusOfRun(client, workflowId));
    known = null;
    if (record.caller?.outcome) return 'finished';
    switch (record.status) {
      case 'rejected':
        return deny(record, !judgedHere);
      case 'executed':
      case 'failed':
      case 'uncertain':
        return 'finished';
      case 'approved': {
        // Redeemed and leased to this very call by the Update that settled it: perform.
        if (leaseNonce !== null && record.capability?.redemption?.nonce === leaseNonce) {
          return leasedForThisCall(client, workflowId, record, signal);
        }
        if (record.caller?.forwarded_at) {
          // Leased, no outcome yet: the performer is still waiting for the tool, or it died holding the lease (then
          // nobody knows whether the tool acted). Never a second performance; say when it settles.
          return refused(
            `the identical call was approved and already forwarded once (at ${record.caller.forwarded_at}); ` +
              'it is never forwarded twice. No outcome was reported yet (the upstream may still be working on it, ' +
              'or the proxy that forwarded it stopped): if none is reported by ' +
              `${record.caller.deadline} the proposal ends uncertain; check the target before calling again`,
            record,
          );
        }
        // Seed 000 §8: the approval travels as a single-use token for this call alone. It is redeemed for exactly the
        // call about to be performed (the proposal was built from it), and the same Update leases the one
        // performance (one round trip); a refused token (expired, redeemed, already leased) performs nothing.
        // Approved with edits (docs/edits.md): the performer performs the edited call, so the token is redeemed for it.
        // Only an unmapped tool call's arguments can be edited for a call its caller performs.
        if (record.edited && !UNMAPPED_TOOL_CALLS.includes(record.edited.proposal.action_type))
          return refused('the call was approved with edits its caller cannot perform; call again as edited', record);
        const performed = record.edited?.proposal ?? proposal;
        const refusal = await redeemForPerformer(client, performed, record, options.redeemer);
        if (refusal) {
          const now = await statusOfRun(client, workflowId);
          // Another performer (or this one, before a crash) leased it: the record answers, never a second one.
          if (now.caller?.forwarded_at) continue;
          return refused(`the approval's capability token was refused: ${refusal}`, record);
        }
        return leasedForThisCall(client, workflowId, record, signal);
      }
      case 'awaiting_clarification': {
        const c = clarificationOf(agent);
        if (clarified || !c) return clarifyOf(record);
        clarified = true;
        judgedHere = true;
        try {
          const r = await abortable(clarify(client, workflowId, c), signal, deadline);
          if (r === 'held-too-long') return held(await statusOfRun(client, workflowId));
        } catch (err) {
          if (err instanceof RefusedError || err instanceof BadInputError) return clarifyOf(record);
          throw err;
        }
        continue;
      }
      case 'awaiting_human': {
        if (Date.now() >= deadline) return held(record);
        const r = await abortable(sleep(options.pollMs ?? 250), signal, deadline);
        if (r === 'held-too-long') return held(await statusOfRun(client, workflowId));
        continue;
      }
      case 'pending': {
        const r = await abortable(waitUntilSettled(client, workflowId), signal, deadline);
        if (r === 'held-too-long') return held(await statusOfRun(client, workflowId));
        continue;
      }
    }
  }
}

/** The call is leased to this performer: perform it, unless the runtime cancelled meanwhile. */
async function leasedForThisCall(
  client: Client,
  workflowId: string,
  status: ProposalRecord,
  signal: AbortSignal,
): Promise<Resolution> {
  if (signal.aborted) {
    await reportNotPerformed(client, workflowId, 'the client cancelled the call after it was leased');
    return { kind: 'cancelled' };
  }
  return { kind: 'forward', status };
}

/** What a fresh proposal's settling Update asks for: on approval, redeem and lease to this call and performer. */
function settleLease(proposal: Proposal, workflowId: string, leaseBeforeMs: number, redeemer: string): SettleLease {
  const { aud, action_sha256 } = capabilityBinding(proposal);
  return {
    lease: 'forwarding',
    audience: aud,
    action_sha256,
    redeemer,
    nonce: `forward:${workflowId}:${randomUUID()}`,
    lease_before: new Date(leaseBeforeMs).toISOString(),
  };
}

/**
 * The gate stopped waiting for a settling Update that may still lease the call (the client cancelled; rarely, the
 * hold ended first). If it did lease it, nobody will perform it: the record says so at once, not at the deadline.
 */
function releaseLateLease(
  client: Client,
  settling: Promise<{ status: ProposalRecord | null }>,
  nonce: string,
  workflowId: string,
  why: string,
): void {
  settling
    .then(async ({ status }) => {
      if (status?.capability?.redemption?.nonce !== nonce) return;
      await reportNotPerformed(client, workflowId, `${why} when the call was approved and leased`);
    })
    .catch(() => undefined); // the start failed, or the report: the deadline then records it
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function clarificationOf(a: AgentStatement): Record<string, unknown> | null {
  if (a.justification === undefined && !a.cited_evidence?.length && a.scope_claim === undefined) return null;
  return { ...a };
}

/**
 * Why a judged call could not be decided, as the agent reads it. Temporal out of reach (stopped, restarting, the
 * network) is said as such, so the agent knows to call again later rather than to change the call; the client
 * reconnects by itself once the service is back.
 */
export function unreachableReason(err: unknown, client: Client): string {
  const detail = err instanceof Error ? err.message : String(err);
  const code = grpcCode(err);
  if (code === GrpcStatus.UNAVAILABLE || code === GrpcStatus.DEADLINE_EXCEEDED) {
    const address = (client.connection as { options?: { address?: string } }).options?.address ?? 'its address';
    return `agent-judge cannot reach its judge (Temporal at ${address}: ${detail}); call again later`;
  }
  return `agent-judge could not judge this call (${detail})`;
}

/** The caller outcome a gate outcome is recorded as. */
export function callerOutcomeOf(outcome: GateOutcome, detail?: string): CallerOutcome {
  switch (outcome) {
    case 'ok':
    case 'tool_error':
    case 'unknown':
      return { outcome, ...(detail ? { detail } : {}) };
    case 'performer_failure':
      return { outcome: 'upstream_failure', ...(detail ? { detail } : {}) };
    case 'not_performed':
      // The lease stands (nobody performs it later) and a leased call can no longer be `abandoned`.
      return { outcome: 'upstream_failure', detail: `${detail ?? 'not performed'}; it was not forwarded` };
  }
}

/** A leased call that was never performed: recorded at once, so the proposal does not wait for its deadline. */
export async function reportNotPerformed(client: Client, workflowId: string, why: string): Promise<void> {
  await reportCallerOutcome(client, workflowId, callerOutcomeOf('not_performed', why));
}

/**
 * Redeems the approved call's capability token (once, through its workflow) for the exact call about to be
 * performed; returns why it was refused, or null. No token is a refusal: deny by default.
 */
async function redeemForPerformer(
  client: Client,
  proposal: Proposal,
  status: ProposalRecord,
  redeemer: string,
): Promise<string | null> {
  const token = status.capability?.token;
  if (!token) return 'the approval carries no capability token';
  const { aud, action_sha256 } = capabilityBinding(proposal);
  try {
    await redeemCapability(client, {
      token,
      action: { action_sha256 },
      audience: aud,
      redeemer,
      nonce: `forward:${status.workflow_id}:${randomUUID()}`,
      // Redeeming leases the one performance: only the performer whose Update is accepted performs the call.
      lease: 'forwarding',
    });
    return null;
  } catch (err) {
    if (err instanceof CapabilityRefusedError) return err.message;
    throw err;
  }
}
