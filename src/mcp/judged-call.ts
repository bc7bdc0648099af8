/**
 * A judged `tools/call` against its proposal workflow: start it (or find the identical call's proposal), hold while
 * a slow judge or a person decides, clarify it with the re-issued call's `_agent_judge`, and claim the approved call
 * for forwarding. The answer is either "forward now" (the claim is taken: forward exactly once, then report) or a
 * tool result to give the agent. Nothing here ever forwards: the proxy does, and only on `forward`.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { DuplicateProposalError } from '../contracts/errors';
import type { ProposalOutcome, ProposalStatus } from '../contracts/status';
import type { CallerOutcome } from '../contracts/caller-outcome';
import { proposalWorkflowId } from '../contracts/digest';
import { callerOutcomeUpdate, clarifyUpdate, statusQuery } from '../names';
import { submitAndSettle, waitUntilSettled } from '../client/proposals';
import { CapabilityRefusedError, redeemCapability } from '../client/capabilities';
import { grpcCode, GrpcStatus } from '../client/grpc';
import { capabilityBinding, type SettleClaim } from '../contracts/capability';
import type { Proposal } from '../contracts/proposal';
import type { AgentJudgeArgument } from './tools';
import { type CallAnswer, clarifyAnswer, pendingAnswer, rejectAnswer, refusedAnswer } from './answers';

/** The most identical calls one proposal chain follows before refusing (each finished call is one step). */
export const MAX_CALL_SEQUENCE = 10_000;
/** Runs of one call that ended without a decision (terminated, failed) skipped before the call is refused. */
const MAX_BROKEN_RUNS = 3;
/**
 * A fresh proposal's settling Update claims an approval only if it is decided within this long of the call (the
 * policy, the patterns, the rules: the decisions where one round trip more would show). A claim nobody forwards is
 * recorded at once when the proxy is still there to see it (a cancelled call), but a proxy that dies holding it leaves
 * it to the deadline, where it reads "forwarded, no outcome": keeping the window short keeps that case rare. A slower
 * decision (a model, a person) is redeemed and claimed by one Update after it, a round trip lost in its seconds.
 */
const CLAIM_WINDOW_MS = 2000;
/** ... and only if it comes this long before the hold ends (at most half the hold), so the proxy still waits for it. */
const CLAIM_MARGIN_MS = 1000;

export type Resolution =
  | { kind: 'forward'; status: ProposalStatus }
  | { kind: 'answer'; answer: CallAnswer }
  | { kind: 'cancelled' };

export interface JudgeCallOptions {
  client: Client;
  taskQueue: string;
  holdMs: number;
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
}

class Cancelled extends Error {}

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

/**
 * Resolves one judged call. `proposalAt(sequence)` builds the call's proposal for each sequence number; the first
 * sequence whose proposal is not finished is the one this call belongs to (a finished legitimate call makes the
 * next identical call a new proposal; a rejected one stays refused).
 */
export async function resolveJudgedCall(
  options: JudgeCallOptions,
  proposalAt: (sequence: number) => Proposal,
  agentJudge: AgentJudgeArgument,
): Promise<Resolution> {
  const { client, signal } = options;
  const deadline = Date.now() + options.holdMs;
  const ticker = options.onHeld ? setInterval(() => options.onHeld?.('held'), 1000) : undefined;
  let brokenRuns = 0;
  try {
    // Finished proposals stay finished and a rejected one is never passed, so starting past the known-finished ones
    // changes no answer: a rejected call stays refused, a finished approved one makes this call a new proposal.
    for (let sequence = options.firstSequence ?? 0; sequence < MAX_CALL_SEQUENCE; sequence++) {
      const proposal = proposalAt(sequence);
      const workflowId = proposalWorkflowId(proposal);
      const handle = client.workflow.getHandle(workflowId);
      let fresh = true;
      let settled: ProposalStatus | null = null;
      // A fresh proposal that settles approved comes back already redeemed and claimed for this call (one round
      // trip fewer before the forward); the nonce tells this call's claim from anybody else's.
      const claimBefore = Math.min(
        Date.now() + CLAIM_WINDOW_MS,
        deadline - Math.min(CLAIM_MARGIN_MS, options.holdMs / 2),
      );
      const claim = settleClaim(proposal, workflowId, claimBefore);
      const settling = submitAndSettle(client, proposal, { taskQueue: options.taskQueue, claim });
      try {
        const started = await abortable(settling, signal, deadline);
        if (started === 'held-too-long') {
          releaseLateClaim(client, settling, claim.nonce, workflowId, 'the hold had ended');
          return held(await handle.query(statusQuery));
        }
        settled = started.status;
      } catch (err) {
        if (err instanceof Cancelled)
          releaseLateClaim(client, settling, claim.nonce, workflowId, 'the client cancelled');
        if (!(err instanceof DuplicateProposalError)) throw err;
        fresh = false;
        const description = await handle.describe();
        if (description.status.name !== 'RUNNING' && description.status.name !== 'COMPLETED') {
          // Failed, terminated or timed out without a decision: a few such runs are skipped; more is a fault that a
          // new proposal per call would only repeat.
          if (++brokenRuns > MAX_BROKEN_RUNS) {
            return {
              kind: 'answer',
              answer: refusedAnswer(
                `the identical call's proposal ${workflowId} ended without a decision (${description.status.name})`,
              ),
            };
          }
          continue; // not remembered: every walk counts the broken runs it passes
        }
        if (description.status.name === 'COMPLETED') {
          // Closed runs answer from their result: no worker needed to replay them.
          const final = (await handle.result().catch(() => null)) as ProposalOutcome | null;
          if (final?.status === 'rejected') return { kind: 'answer', answer: rejectAnswer(final, true) };
          if (brokenRuns === 0) options.onFinished?.(sequence + 1);
          continue; // finished (performed, failed, abandoned): the identical call now is a new proposal
        }
      }
      const step = await follow(options, proposal, agentJudge, deadline, fresh, settled, fresh ? claim.nonce : null);
      if (step === 'finished') {
        if (brokenRuns === 0) options.onFinished?.(sequence + 1);
        continue;
      }
      return step;
    }
    return { kind: 'answer', answer: refusedAnswer(`more than ${MAX_CALL_SEQUENCE} identical calls`) };
  } catch (err) {
    if (err instanceof Cancelled) return { kind: 'cancelled' };
    throw err;
  } finally {
    if (ticker) clearInterval(ticker);
  }
}

function held(status: ProposalStatus): Resolution {
  return { kind: 'answer', answer: pendingAnswer(status) };
}

/** Follows one open proposal until it asks for something, is decided, or the hold ends. */
async function follow(
  options: JudgeCallOptions,
  proposal: Proposal,
  agentJudge: AgentJudgeArgument,
  deadline: number,
  fresh: boolean,
  /** The status the start's settling Update already returned: the first look needs no Query. */
  settled: ProposalStatus | null = null,
  /** The nonce of the claim that Update carried: a redemption under it is this call's claim. */
  claimNonce: string | null = null,
): Promise<Resolution | 'finished'> {
  const { client, signal } = options;
  const workflowId = proposalWorkflowId(proposal);
  const handle = client.workflow.getHandle(workflowId);
  let clarified = fresh; // a fresh proposal already carries this call's _agent_judge
  let judgedHere = fresh; // this call started or clarified the proposal: its REJECT is news, not a record
  let known = settled;
  for (;;) {
    const status = known ?? (await handle.query(statusQuery));
    known = null;
    if (status.caller?.outcome) return 'finished';
    switch (status.status) {
      case 'rejected':
        return { kind: 'answer', answer: rejectAnswer(status, !judgedHere) };
      case 'executed':
      case 'failed':
      case 'uncertain':
        return 'finished';
      case 'approved': {
        // Redeemed and claimed for this very call by the Update that settled it: forward.
        if (claimNonce !== null && status.capability?.redemption?.nonce === claimNonce) {
          return claimedForThisCall(client, workflowId, status, signal);
        }
        if (status.caller?.forwarded_at) {
          // Claimed, no outcome yet: the forwarding proxy is still waiting for the upstream, or it died after the
          // claim (then nobody knows whether the upstream acted). Never a second forward; say when it settles.
          return {
            kind: 'answer',
            answer: refusedAnswer(
              `the identical call was approved and already forwarded once (at ${status.caller.forwarded_at}); ` +
                'it is never forwarded twice. No outcome was reported yet (the upstream may still be working on it, ' +
                'or the proxy that forwarded it stopped): if none is reported by ' +
                `${status.caller.deadline} the proposal ends uncertain; check the target before calling again`,
              status,
            ),
          };
        }
        // Seed 000 §8: the approval travels as a single-use token for this call alone. It is redeemed for exactly the
        // call about to be forwarded (the proposal was built from it), and the same Update claims the one forwarding
        // (one round trip); a refused token (expired, redeemed, the call already claimed) forwards nothing.
        const refusal = await redeemForForwarding(client, proposal, status);
        if (refusal) {
          const now = await handle.query(statusQuery);
          // Another proxy (or this one, before a crash) claimed it: the record answers, never a second forward.
          if (now.caller?.forwarded_at) continue;
          return {
            kind: 'answer',
            answer: refusedAnswer(`the approval's capability token was refused: ${refusal}`, status),
          };
        }
        return claimedForThisCall(client, workflowId, status, signal);
      }
      case 'awaiting_clarification': {
        const c = clarificationOf(agentJudge);
        if (clarified || !c) return { kind: 'answer', answer: clarifyAnswer(status) };
        clarified = true;
        judgedHere = true;
        try {
          const r = await abortable(handle.executeUpdate(clarifyUpdate, { args: [c] }), signal, deadline);
          if (r === 'held-too-long') return held(await handle.query(statusQuery));
        } catch (err) {
          if (err instanceof WorkflowUpdateFailedError) return { kind: 'answer', answer: clarifyAnswer(status) };
          throw err;
        }
        continue;
      }
      case 'awaiting_human': {
        if (Date.now() >= deadline) return held(status);
        const r = await abortable(sleep(options.pollMs ?? 250), signal, deadline);
        if (r === 'held-too-long') return held(await handle.query(statusQuery));
        continue;
      }
      case 'pending': {
        const r = await abortable(waitUntilSettled(client, workflowId), signal, deadline);
        if (r === 'held-too-long') return held(await handle.query(statusQuery));
        continue;
      }
    }
  }
}

/** The call is claimed for this proxy: forward it, unless the client cancelled meanwhile. */
async function claimedForThisCall(
  client: Client,
  workflowId: string,
  status: ProposalStatus,
  signal: AbortSignal,
): Promise<Resolution> {
  if (signal.aborted) {
    await reportNotForwarded(client, workflowId, 'the client cancelled the call after it was claimed');
    return { kind: 'cancelled' };
  }
  return { kind: 'forward', status };
}

/** What a fresh proposal's settling Update asks for: on approval, redeem and claim for this call (mcp-proxy). */
function settleClaim(proposal: Proposal, workflowId: string, claimBeforeMs: number): SettleClaim {
  const { aud, action_sha256 } = capabilityBinding(proposal);
  return {
    claim: 'forwarding',
    audience: aud,
    action_sha256,
    redeemer: 'mcp-proxy',
    nonce: `forward:${workflowId}:${randomUUID()}`,
    claim_before: new Date(claimBeforeMs).toISOString(),
  };
}

/**
 * The proxy stopped waiting for a settling Update that may still claim the call (the client cancelled; rarely, the
 * hold ended first). If it did claim, nobody will forward it: the record says so at once, not at the deadline.
 */
function releaseLateClaim(
  client: Client,
  settling: Promise<{ status: ProposalStatus | null }>,
  nonce: string,
  workflowId: string,
  why: string,
): void {
  settling
    .then(async ({ status }) => {
      if (status?.capability?.redemption?.nonce !== nonce) return;
      await reportNotForwarded(client, workflowId, `${why} when the call was approved and claimed`);
    })
    .catch(() => undefined); // the start failed, or the report: the deadline then records it
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function clarificationOf(a: AgentJudgeArgument): Record<string, unknown> | null {
  if (a.justification === undefined && !a.cited_evidence?.length && a.scope_claim === undefined) return null;
  return { ...a };
}

/**
 * Why a judged call could not be decided, as the agent reads it. Temporal out of reach (stopped, restarting, the
 * network) is said as such, so the agent knows to call again later rather than to change the call; the proxy keeps
 * its client, which reconnects by itself once the service is back.
 */
export function judgeFailure(err: unknown, client: Client): string {
  const detail = err instanceof Error ? err.message : String(err);
  const code = grpcCode(err);
  if (code === GrpcStatus.UNAVAILABLE || code === GrpcStatus.DEADLINE_EXCEEDED) {
    const address = (client.connection as { options?: { address?: string } }).options?.address ?? 'its address';
    return `agent-judge cannot reach its judge (Temporal at ${address}: ${detail}); call again later`;
  }
  return `agent-judge could not judge this call (${detail})`;
}

/** Records what the upstream did with a forwarded call (or that it was never forwarded) on its proposal. */
export async function report(client: Client, workflowId: string, outcome: CallerOutcome): Promise<void> {
  await client.workflow.getHandle(workflowId).executeUpdate(callerOutcomeUpdate, { args: [outcome] });
}

/**
 * A claimed call that was never sent upstream. The claim stands (nobody forwards it later) and a claimed call can no
 * longer be `abandoned`, so the record says `upstream_failure`, why, and that it was not forwarded.
 */
export async function reportNotForwarded(client: Client, workflowId: string, why: string): Promise<void> {
  await report(client, workflowId, { outcome: 'upstream_failure', detail: `${why}; it was not forwarded` });
}

/**
 * Redeems the approved call's capability token (once, through its workflow) for the exact call the proxy is about
 * to forward; returns why it was refused, or null. No token is a refusal: deny by default.
 */
async function redeemForForwarding(client: Client, proposal: Proposal, status: ProposalStatus): Promise<string | null> {
  const token = status.capability?.token;
  if (!token) return 'the approval carries no capability token';
  const { aud, action_sha256 } = capabilityBinding(proposal);
  try {
    await redeemCapability(client, {
      token,
      action: { action_sha256 },
      audience: aud,
      redeemer: 'mcp-proxy',
      nonce: `forward:${status.workflow_id}:${randomUUID()}`,
      // Redeeming claims the one forwarding: only the proxy whose Update is accepted forwards the call.
      claim: 'forwarding',
    });
    return null;
  } catch (err) {
    if (err instanceof CapabilityRefusedError) return err.message;
    throw err;
  }
}
