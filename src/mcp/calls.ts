/**
 * How the MCP proxy performs a `tools/call` (the relay is relay.ts): the call checked and its tool found, handed to
 * the gate (src/gate/), which maps, judges, holds and leases it; then its answer rendered, or the call forwarded:
 * an approved one exactly once under its lease, a no-judge one at once with an audit line (pass-through-audit.ts).
 */
import { GateProvenance } from '../gate/provenance';
import type { ActionChange } from '../contracts/action-edit';
import { editedText } from '../gate/texts';
import { leaseWindowMs, holdForMs } from '../contracts/mcp';
import { Gate, type Lease } from '../gate';
import { refusedAnswer, renderGateAnswer, type CallAnswer } from './answers';
import { judgeFailure } from './judged-call';
import { MCP_REDEEMER, MCP_RUNTIME, type ToolCall } from './mapping';
import { passThroughRecord, type PassThroughRecord } from './pass-through-audit';
import type { ProxyOptions } from './proxy-options';
import { McpRelay, type Id, type Msg } from './relay';
import { splitArguments, toolDefinitionHash, type AgentJudgeArgument } from './tools';

/** A call ready for the gate and the upstream, or why it is refused before any proposal. */
type Prepared =
  | { refusal: CallAnswer }
  | { call: ToolCall; agent: AgentJudgeArgument; upstreamParams: Record<string, unknown> };
/** `tools/call`: prepared, decided by the gate, then answered or forwarded. */
export abstract class McpCalls extends McpRelay {
  /** Maps, judges, holds and leases each judged call (src/gate/); one per proxy, so it remembers identical calls. */
  protected readonly gate: Gate;

  constructor(o: ProxyOptions) {
    super(o);
    this.gate = new Gate({
      client: o.temporal.client,
      taskQueue: o.temporal.taskQueue,
      limits: o.temporal.limits,
      rules: o.settings,
      performer: { agentId: o.agentId, redeemer: MCP_REDEEMER },
      holdMs: holdForMs(o.settings),
      leaseWindowMs: leaseWindowMs(o.settings),
      ...(o.provenance ? { provenance: new GateProvenance(o.provenance) } : {}),
    });
  }

  protected async handleCall(m: Msg): Promise<void> {
    const id = m.id as Id;
    const params = m.params ?? {};
    const name = typeof params.name === 'string' ? params.name : '';
    const progressToken = (params._meta as { progressToken?: string | number } | undefined)?.progressToken;
    const control = new AbortController();
    this.held.set(id, control);
    try {
      const prepared = await this.prepare(params);
      if ('refusal' in prepared) return this.answer(id, prepared.refusal);
      const { call, agent } = prepared;
      const upstreamRequest: Msg = { ...m, params: prepared.upstreamParams };
      let progress = 0;
      // The gate maps, judges, holds and leases (src/gate/); this proxy only renders its answer or performs the call.
      const decision = await this.gate.decide(
        { runtime: MCP_RUNTIME, ...call, agent, session: { callId: String(id) } },
        {
          signal: control.signal,
          onHeld:
            progressToken === undefined
              ? undefined
              : () => {
                  progress += 1;
                  this.progressOffset.set(progressToken, progress);
                  this.toAgent(
                    {
                      jsonrpc: '2.0',
                      method: 'notifications/progress',
                      params: { progressToken, progress, message: 'held by agent-judge: the call is being decided' },
                    },
                    id,
                  );
                },
        },
      );
      if (decision.kind === 'cancelled') return; // a cancelled request gets no response
      // A judged call (a proposal was concerned): the caller warns when this proxy's policy is not the workers'.
      if (decision.kind !== 'refused' && !(decision.kind === 'forward' && decision.lease === null)) {
        this.o.onJudgedCall?.(name);
      }
      if (decision.kind !== 'forward') return this.answer(id, renderGateAnswer(decision));
      if (decision.lease === null) {
        return await this.whileForwarding(this.passThrough(upstreamRequest, call, decision.rule));
      }
      await this.whileForwarding(this.forwardApproved(upstreamRequest, decision.lease, control.signal));
    } catch (err) {
      if (control.signal.aborted) return;
      this.answer(id, refusedAnswer(judgeFailure(err, this.o.temporal.client)));
    } finally {
      this.held.delete(id);
      if (progressToken !== undefined) this.progressOffset.delete(progressToken);
    }
  }

  /** What the upstream returned enters this connection's provenance (after the agent has it, unchanged). */
  private recordResult(request: Msg, response: Msg): void {
    if (!response.result) return;
    const tool = typeof request.params?.name === 'string' ? request.params.name : '';
    this.gate.recordResult({ runtime: MCP_RUNTIME, server: this.o.server, tool }, response.result);
  }

  /** The call's arguments checked and split, its tool's definition found; or why it is refused. */
  protected async prepare(params: Record<string, unknown>): Promise<Prepared> {
    const name = typeof params.name === 'string' ? params.name : '';
    let split;
    try {
      split = splitArguments(params.arguments);
    } catch (err) {
      return { refusal: refusedAnswer((err as Error).message) };
    }
    const tool = await this.tools.named(name);
    if (!tool) return { refusal: refusedAnswer(`the upstream lists no tool named ${JSON.stringify(name)}`) };
    const call: ToolCall = {
      server: this.o.server,
      tool: name,
      toolDefinitionHash: toolDefinitionHash(tool),
      arguments: split.upstream,
    };
    return { call, agent: split.agentJudge, upstreamParams: { ...params, arguments: split.upstream } };
  }

  /**
   * THE one place an approved call goes upstream, exactly once: the gate leased it to this proxy (the lease is taken
   * on the proposal, the capability token redeemed with it); the outcome is reported back, after the agent has its
   * answer.
   */
  protected async forwardApproved(request: Msg, lease: Lease, signal: AbortSignal): Promise<void> {
    const id = request.id as Id;
    if (signal.aborted || this.closed) {
      await lease.report('not_performed', 'the client cancelled the call after it was leased');
      return;
    }
    this.held.delete(id); // forwarded from here on: a cancellation goes to the upstream as it is
    let outcome: 'ok' | 'tool_error' | 'performer_failure';
    let detail: string | undefined;
    // Approved with edits (docs/edits.md): the upstream gets exactly the edited arguments, the token was redeemed for.
    const edited = lease.edited;
    const sent: Msg = edited
      ? { ...request, params: { ...(request.params ?? {}), arguments: edited.arguments } }
      : request;
    try {
      const response = await this.forward(sent);
      this.toAgent(edited ? withEditNote(response, edited.changes) : response);
      this.recordResult(request, response);
      if (response.error) {
        outcome = 'performer_failure';
        detail = JSON.stringify(response.error).slice(0, 2000);
      } else outcome = (response.result as { isError?: boolean } | undefined)?.isError ? 'tool_error' : 'ok';
    } catch (err) {
      outcome = 'performer_failure';
      detail = (err as Error).message;
      this.answer(id, refusedAnswer(`the upstream failed after the call was forwarded: ${detail}`));
    }
    await lease
      .report(outcome, detail)
      .catch((err: Error) =>
        this.o.logger.error({ workflow_id: lease.workflowId, err: err.message }, 'could not record the outcome'),
      );
  }

  /**
   * A no-judge call: forwarded at once, no workflow, one hash-chained audit line. The line is appended right after
   * the agent has the result (the append takes a lock and costs ~1 ms: it is kept off the call's latency); the
   * appends are chained one after the other, in call order.
   */
  protected async passThrough(request: Msg, call: ToolCall, rule: string): Promise<void> {
    const started = Date.now();
    this.held.delete(request.id as Id);
    let outcome: PassThroughRecord['outcome'];
    try {
      const response = await this.forward(request);
      this.toAgent(response);
      this.recordResult(request, response);
      outcome = response.error
        ? 'upstream_failure'
        : (response.result as { isError?: boolean } | undefined)?.isError
          ? 'tool_error'
          : 'ok';
    } catch (err) {
      outcome = 'upstream_failure';
      this.answer(request.id as Id, refusedAnswer(`the upstream failed: ${(err as Error).message}`));
    }
    const finished = Date.now();
    const record = passThroughRecord(this.o.agentId, call, rule, outcome, started, finished);
    await this.audit.passThrough(record);
  }
}

/**
 * The upstream's answer to a call approved with edits, with a first text item telling the agent what ran instead of
 * what it sent (the edits, each path before and after). An error answer is passed as it is.
 */
export function withEditNote(response: Msg, changes: readonly ActionChange[]): Msg {
  const result = response.result as { content?: unknown[] } | undefined;
  if (!result || !Array.isArray(result.content)) return response;
  const text = editedText(changes);
  return { ...response, result: { ...result, content: [{ type: 'text', text }, ...result.content] } };
}
