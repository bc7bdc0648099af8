/**
 * The gate service seen from an agent's process: `remoteGate({ url, token })` decides tool calls over the service's
 * `/v1` HTTP API (src/gate/service/) and gives back the same answers as the in-process gate, so a framework adapter
 * works the same with either. The agent's process holds only its token: no Temporal client, no namespace access, and
 * no way to name another agent (the token decides). Fails closed: agent-judge out of reach, a bad answer or a timeout
 * is `refused`, never `forward`. Imports nothing that loads Temporal.
 */
import type { CallAnswer, CallRequest } from './service/api';
import type { CallGate, DecideOptions, GateAnswer, GateOutcome, GateToolCall, PerformerLease } from './types';

export interface RemoteGateOptions {
  /** The gate service's base URL: `http://127.0.0.1:8766` (`agent-judge dev` prints it). */
  url: string;
  /** This agent's bearer token (`agent-judge hook token --agent @x`; `.agent-judge/hook-token` under `dev`). */
  token: string;
  /** How long one request may take before the call is refused (ms, default 150000: above the longest hold). */
  timeoutMs?: number;
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch;
}

/** A gate for this agent, behind the gate service. */
export function remoteGate(options: RemoteGateOptions): CallGate {
  const base = options.url.replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 150_000;
  const post = async (path: string, body: unknown, signal?: AbortSignal): Promise<Response> => {
    const timeout = AbortSignal.timeout(timeoutMs);
    return doFetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${options.token}` },
      body: JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  };
  const refused = (reason: string): GateAnswer<PerformerLease> => ({ kind: 'refused', reason, proposal: null });

  return {
    async decide(call: GateToolCall, opts: DecideOptions = {}): Promise<GateAnswer<PerformerLease>> {
      let res: Response;
      try {
        res = await post('/v1/calls', requestOf(call, opts), opts.signal);
      } catch (err) {
        if (opts.signal?.aborted) return { kind: 'cancelled' };
        return refused(`agent-judge's gate service at ${base} could not be reached (${(err as Error).message})`);
      }
      let body: unknown;
      try {
        body = await res.json();
      } catch {
        return refused(`agent-judge's gate service at ${base} answered ${res.status} without JSON`);
      }
      if (!res.ok) {
        const error = (body as { error?: unknown }).error;
        return refused(`agent-judge's gate service at ${base} refused the call (${res.status}: ${String(error)})`);
      }
      return answerOf(body as CallAnswer, (id, outcome, detail) => reportTo(post, base, id, outcome, detail));
    },
  };
}

function requestOf(call: GateToolCall, opts: DecideOptions): CallRequest {
  return {
    runtime: call.runtime,
    server: call.server,
    tool: call.tool,
    arguments: call.arguments,
    ...(call.toolDefinitionHash !== undefined ? { tool_definition_hash: call.toolDefinitionHash } : {}),
    ...(call.session?.sessionId ? { session_id: call.session.sessionId } : {}),
    ...(call.session?.callId ? { call_id: call.session.callId } : {}),
    ...(call.userTask !== undefined ? { user_task: call.userTask } : {}),
    ...(call.agent ? { agent: call.agent } : {}),
    ...(opts.holdMs !== undefined ? { hold_ms: opts.holdMs } : {}),
  };
}

async function reportTo(
  post: (path: string, body: unknown) => Promise<Response>,
  base: string,
  id: string,
  outcome: GateOutcome,
  detail?: string,
): Promise<void> {
  const res = await post(`/v1/calls/${encodeURIComponent(id)}/outcome`, {
    outcome,
    ...(detail !== undefined ? { detail: detail.slice(0, 2000) } : {}),
  });
  if (!res.ok) {
    const text = await res.text().catch(() => '');
    throw new Error(`agent-judge's gate service at ${base} did not record the outcome (${res.status}: ${text})`);
  }
}

/** The service's answer as the gate's own answer type. */
function answerOf(
  a: CallAnswer,
  report: (id: string, outcome: GateOutcome, detail?: string) => Promise<void>,
): GateAnswer<PerformerLease> {
  const ref = (x: { proposal_id: string; workflow_id: string; verdict: PerformerLease['verdict'] }) => ({
    proposalId: x.proposal_id,
    workflowId: x.workflow_id,
    verdict: x.verdict,
  });
  switch (a.kind) {
    case 'forward': {
      const l = a.lease;
      let reported = false;
      const lease: PerformerLease | null = l
        ? {
            ...ref(l),
            edited: l.edits
              ? {
                  arguments: a.arguments,
                  changes: l.edits as unknown as NonNullable<PerformerLease['edited']>['changes'],
                }
              : null,
            report: async (outcome, detail) => {
              if (reported) throw new Error(`the lease on ${l.workflow_id} was already reported`);
              reported = true;
              await report(l.id, outcome, detail);
            },
          }
        : null;
      return { kind: 'forward', rule: a.rule, lease, arguments: a.arguments };
    }
    case 'deny':
      return { kind: 'deny', reason: a.reason, recorded: a.recorded, final: true, ...ref(a) };
    case 'clarify':
      return { kind: 'clarify', reason: a.reason, roundsLeft: a.rounds_left, deadline: a.deadline, ...ref(a) };
    case 'pending':
      return {
        kind: 'pending',
        waitingFor: a.waiting_for,
        status: a.status,
        deadline: a.deadline,
        retryAfterMs: a.retry_after_ms,
        ...ref(a),
      };
    case 'refused':
      return {
        kind: 'refused',
        reason: a.reason,
        proposal:
          a.proposal_id && a.workflow_id
            ? { proposalId: a.proposal_id, workflowId: a.workflow_id, verdict: null }
            : null,
      };
    default:
      return { kind: 'refused', reason: 'the gate service answered a kind this client does not know', proposal: null };
  }
}
