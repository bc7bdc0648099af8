/**
 * The relay half of the MCP judge proxy (proxy.ts): the messages between the agent (the front transport) and the
 * upstream, in both directions, with what the relay must remember of them (requests in flight, progress tokens,
 * held and forwarded calls, the upstream's own requests) and what happens when either side goes away. What a
 * `tools/call` or an MCP task request does is the layers above: calls.ts, task-calls.ts and proxy.ts.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { BadInputError } from '../contracts/errors';
import { admit, refuseBatch, type Admission, type ErrorAnswer } from './admission';
import { refusedAnswer, type CallAnswer } from './answers';
import { AuditQueue } from './pass-through-audit';
import type { ProxyOptions } from './proxy-options';
import { isTaskAugmented, withTaskCapabilities, withTaskSupport } from './tasks';
import { ToolCache } from './tool-cache';
import { augmentToolsList, ToolNameCollisionError } from './tools';
import { oneLine, UpstreamGoneError } from './upstream';

export type Id = string | number;
export type Msg = Record<string, unknown> & { id?: Id; method?: string; params?: Record<string, unknown> };

/** How long an ended upstream's forwarded calls get to answer and record their outcome before the proxy exits. */
const FORWARDED_WAIT_MS = 5000;

/** Resolves when `p` settles or after `ms`, whichever comes first (a bounded wait; never rejects). */
function settledWithin(p: Promise<unknown>, ms: number): Promise<unknown> {
  return Promise.race([p.catch(() => undefined), new Promise((r) => setTimeout(r, ms).unref())]);
}

interface Forwarded {
  resolve: (response: Msg) => void;
  reject: (err: Error) => void;
}
/** The relay: every message between the agent and the upstream passes here. */
export abstract class McpRelay {
  protected readonly toolsListRequests = new Set<Id>();
  /** Calls being judged or held: a cancellation aborts them before anything is forwarded. */
  protected readonly held = new Map<Id, AbortController>();
  /** Calls forwarded to the upstream, waiting for its response. */
  protected readonly forwarded = new Map<Id, Forwarded>();
  /** The proxy's own requests to the upstream (tools/list for its cache). */
  protected readonly own = new Map<Id, Forwarded>();
  /** Progress values already sent for a held call's token: the upstream's own progress is shifted past them. */
  protected readonly progressOffset = new Map<string | number, number>();
  /** The agent's requests the upstream is working on, oldest first (what the upstream's own messages relate to). */
  protected readonly inFlight = new Set<Id>();
  /** Progress tokens of the agent's requests, to the request: progress goes on that request's HTTP stream. */
  protected readonly progressRequest = new Map<string | number, Id>();
  protected ownSeq = 0;
  protected closed = false;
  /** Why the upstream went away, when its transport said (an HTTP upstream); a stdio upstream just exits. */
  protected upstreamGone: string | undefined;
  protected upstreamEnded = false;
  /** Forwarded calls still answering the agent and reporting their outcome. */
  protected readonly forwarding = new Set<Promise<unknown>>();
  /** Requests answered with an error when the upstream ended: a later answer to them is dropped. */
  protected readonly answeredAtEnd = new Set<Id>();
  /** The upstream's requests to the agent (sampling, elicitation, roots, ping) not answered yet: their answers pass. */
  protected readonly awaited = new Set<Id>();

  /** The agent declared `tasks` in its initialize (client capabilities): task-augmented judged calls become tasks. */
  protected clientTasks = false;
  protected initializeId: Id | undefined;
  /** The upstream declared `tasks` itself: its own tasks are listed too, and relayed by id. */
  protected upstreamTasks = false;

  /** The upstream's tool definitions, by name. */
  protected readonly tools = new ToolCache((method, params) => this.ownRequest(method, params));
  /** The proxy's audit lines (pass-through calls, dropped messages), in order. */
  protected readonly audit: AuditQueue;

  constructor(protected readonly o: ProxyOptions) {
    this.audit = new AuditQueue(o);
  }

  /** A `tools/call` (calls.ts). */
  protected abstract handleCall(m: Msg): Promise<void>;
  /** A task-augmented `tools/call` from an agent that takes tasks (task-calls.ts). */
  protected abstract handleTaskCall(m: Msg): Promise<void>;
  /** A `tasks/*` request for one of the proxy's own tasks (task-calls.ts). */
  protected abstract isOwnTaskRequest(m: Msg): boolean;
  /** Answers a `tasks/*` request for one of the proxy's own tasks (proxy.ts). */
  protected abstract handleTaskRequest(m: Msg): Promise<void>;
  /** The agent or the upstream went away: task runners stop before performing anything (task-calls.ts). */
  protected abstract stopTaskRunners(): void;

  async start(): Promise<void> {
    this.o.front.onmessage = (m) => this.fromAgent(m);
    this.o.upstream.onmessage = (m) => this.fromUpstream(m);
    this.o.upstream.onclose = () => this.upstreamClosed();
    this.o.upstream.onerror = (e) => {
      if (e instanceof UpstreamGoneError) this.upstreamGone = e.message;
      else this.o.logger.warn({ err: oneLine(e) }, 'upstream error'); // the SDK's parse errors span many lines
    };
    this.o.front.onerror = (e) => this.o.logger.warn({ err: e.message }, 'agent side error');
    await this.o.upstream.start();
    await this.o.front.start();
  }

  /** The agent went away: nothing held is ever forwarded; the upstream is closed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.held.values()) c.abort();
    // A task's runner stops; its record stays, so the next proxy for this agent takes the task up again.
    this.stopTaskRunners();
    await this.flushAudit();
    await this.o.upstream.close().catch(() => undefined);
    await this.o.front.close().catch(() => undefined);
  }

  // --- agent -> upstream ------------------------------------------------------------------------

  protected fromAgent(m: Msg): void {
    // Before anything else: only what MCP lets a client send goes on (a tools/call without an id is never relayed).
    const admission = admit(m, this.awaited);
    if (!admission.pass) return this.drop(admission);
    if (m.method === undefined) this.awaited.delete(m.id as Id);
    if (m.method !== undefined && m.id !== undefined) {
      if (m.method === 'initialize') {
        this.initializeId = m.id;
        const tasks = (m.params?.capabilities as Record<string, unknown> | undefined)?.tasks;
        this.clientTasks = tasks !== null && typeof tasks === 'object';
      }
      if (m.method === 'tools/call') {
        if (this.clientTasks && isTaskAugmented(m.params)) void this.handleTaskCall(m);
        else void this.handleCall(m);
        return;
      }
      if (this.clientTasks && this.isOwnTaskRequest(m)) {
        void this.handleTaskRequest(m);
        return;
      }
      if (m.method === 'tools/list') this.toolsListRequests.add(m.id);
      this.track(m);
      this.toUpstream(m);
      return;
    }
    if (m.method === 'notifications/cancelled') {
      const id = m.params?.requestId as Id | undefined;
      const held = id === undefined ? undefined : this.held.get(id);
      if (held) {
        // Not forwarded yet: it never will be. The upstream never heard of this id.
        held.abort();
        return;
      }
    }
    this.toUpstream(m);
    if (m.method === 'notifications/initialized') void this.checkToolsAtStart();
  }

  /** A JSON-RPC batch from the agent (the stdio front hands it here unparsed by the SDK): refused whole. */
  refuseBatch(batch: unknown[]): void {
    const refusal = refuseBatch(batch);
    this.drop(refusal, refusal.answers);
  }

  /** A message that does not reach the upstream: one log line, one audit line, and an error if it had an id. */
  protected drop(a: Admission & { pass: false }, answers: ErrorAnswer[] = a.answer ? [a.answer] : []): void {
    this.o.logger.warn(
      { agent: this.o.agentId, reason: a.reason, detail: a.detail },
      'dropped a message from the agent, not relayed',
    );
    this.o.counters?.dropped(a.reason);
    for (const answer of answers) this.toAgent(answer);
    const record = {
      kind: 'mcp_dropped' as const,
      agent: this.o.agentId,
      server: this.o.server,
      reason: a.reason,
      method: a.method,
      answered: answers.length > 0,
      at: new Date().toISOString(),
    };
    this.audit.dropped(record);
  }

  /** Remembers an agent request relayed upstream until its response comes back. */
  protected track(m: Msg): void {
    const id = m.id as Id;
    this.inFlight.add(id);
    const token = (m.params?._meta as { progressToken?: string | number } | undefined)?.progressToken;
    if (token !== undefined) this.progressRequest.set(token, id);
  }

  protected untrack(id: Id): void {
    this.inFlight.delete(id);
    for (const [token, request] of this.progressRequest) if (request === id) this.progressRequest.delete(token);
  }

  protected toUpstream(m: Msg): void {
    this.o.upstream.send(m as JSONRPCMessage).catch((e: Error) => {
      // Once the upstream has ended, the proxy's last line says why.
      if (!this.upstreamEnded) this.o.logger.warn({ err: e.message }, 'could not send to the upstream');
      // A request that never reached the upstream gets an error now instead of no answer at all.
      if (m.method !== undefined && m.id !== undefined && this.inFlight.has(m.id)) {
        this.untrack(m.id);
        this.toAgent({
          jsonrpc: '2.0',
          id: m.id,
          error: { code: -32603, message: `agent-judge: the upstream MCP server could not be reached (${e.message})` },
        });
      }
    });
  }

  /**
   * To the agent. `related` names the agent request a message belongs to: the Streamable HTTP front sends it on
   * that request's stream (stdio ignores it); if that stream is gone, on the session's own stream instead.
   */
  protected toAgent(m: Msg, related?: Id): void {
    if (this.closed) return;
    if (m.method === undefined && m.id !== undefined && this.answeredAtEnd.has(m.id)) return;
    const fail = (e: Error) => this.o.logger.warn({ err: e.message }, 'could not send to the agent');
    if (related === undefined) {
      this.o.front.send(m as JSONRPCMessage).catch(fail);
      return;
    }
    this.o.front
      .send(m as JSONRPCMessage, { relatedRequestId: related })
      .catch(() => this.o.front.send(m as JSONRPCMessage).catch(fail));
  }

  /** The agent request an upstream notification or request most likely belongs to (stdio does not say). */
  protected relatedTo(m: Msg): Id | undefined {
    if (m.method === 'notifications/progress') {
      return this.progressRequest.get(m.params?.progressToken as string | number);
    }
    let newest: Id | undefined;
    for (const id of this.inFlight) newest = id;
    return newest;
  }

  // --- upstream -> agent ------------------------------------------------------------------------

  protected fromUpstream(m: Msg): void {
    const isResponse = m.method === undefined && m.id !== undefined;
    if (isResponse) {
      const id = m.id as Id;
      const own = this.own.get(id);
      if (own) {
        this.own.delete(id);
        own.resolve(m);
        return;
      }
      this.untrack(id);
      const fwd = this.forwarded.get(id);
      if (fwd) {
        this.forwarded.delete(id);
        fwd.resolve(m);
        return;
      }
      if (id === this.initializeId && this.clientTasks && m.result) {
        // The agent takes tasks: the proxy's own task support joins the upstream's capabilities (none removed).
        const result = m.result as Record<string, unknown>;
        this.upstreamTasks = Boolean((result.capabilities as Record<string, unknown> | undefined)?.tasks);
        this.toAgent({ ...m, result: withTaskCapabilities(result) });
        return;
      }
      if (this.toolsListRequests.delete(id) && m.result) {
        try {
          this.tools.remember(m.result as Record<string, unknown>);
          const augmented = augmentToolsList(m.result as Record<string, unknown>);
          this.toAgent({
            ...m,
            result: this.clientTasks ? withTaskSupport(augmented, this.o.settings, this.o.server) : augmented,
          });
        } catch (err) {
          this.fatal(err as Error, m.id);
        }
        return;
      }
    }
    if (m.method !== undefined && m.id !== undefined) this.awaited.add(m.id);
    // The upstream gave up on one of its requests: an answer to it is no longer awaited.
    if (m.method === 'notifications/cancelled') this.awaited.delete(m.params?.requestId as Id);
    if (m.method === 'notifications/tools/list_changed') {
      this.tools.clear();
    }
    if (m.method === 'notifications/progress' && m.params) {
      const offset = this.progressOffset.get(m.params.progressToken as string | number);
      if (offset !== undefined) {
        const p = m.params as { progress: number; total?: number };
        const shifted: Record<string, unknown> = { ...m.params, progress: p.progress + offset + 1 };
        if (typeof p.total === 'number') shifted.total = p.total + offset + 1;
        this.toAgent({ ...m, params: shifted }, this.relatedTo(m));
        return;
      }
    }
    this.toAgent(m, isResponse ? undefined : this.relatedTo(m));
  }

  protected upstreamClosed(): void {
    if (this.upstreamEnded) return;
    this.upstreamEnded = true;
    const why = this.upstreamGone ?? 'the upstream MCP server exited';
    const forwarded = new Set(this.forwarded.keys());
    for (const f of [...this.forwarded.values(), ...this.own.values()]) f.reject(new Error(why));
    this.forwarded.clear();
    this.own.clear();
    if (this.closed) return;
    // Nothing the agent still waits for may hang until its own timeout. Forwarded calls answer and report their
    // outcome themselves (upstream_failure); relayed requests get an error now; held calls are refused and cancelled,
    // so they are never forwarded (as when the agent cancels them).
    for (const id of this.inFlight) {
      if (forwarded.has(id)) continue;
      this.toAgent({ jsonrpc: '2.0', id, error: { code: -32603, message: `agent-judge: ${why}` } });
      this.answeredAtEnd.add(id);
    }
    this.inFlight.clear();
    this.progressRequest.clear();
    this.awaited.clear();
    for (const [id, control] of this.held) {
      this.answer(id, refusedAnswer(`${why}; the call was not forwarded`));
      this.answeredAtEnd.add(id);
      control.abort();
    }
    // Task runners stop before performing anything; the records stay for a proxy with a live upstream.
    this.stopTaskRunners();
    // The forwarded calls' answers and outcome reports go out before the proxy ends.
    void settledWithin(Promise.allSettled([...this.forwarding]), FORWARDED_WAIT_MS).then(() => {
      if (!this.closed) this.o.onFatal(`agent-judge mcp: ${why}`, 1);
    });
  }

  protected fatal(err: Error, id?: Id): void {
    const exitCode = err instanceof BadInputError ? 2 : 1;
    if (id !== undefined) this.toAgent({ jsonrpc: '2.0', id, error: { code: -32603, message: err.message } });
    this.o.onFatal(`agent-judge mcp: ${err.message}`, exitCode);
  }

  // --- the proxy's own requests, and forwarded calls --------------------------------------------

  protected ownRequest(method: string, params: Record<string, unknown>): Promise<Msg> {
    const id = `agent-judge/${++this.ownSeq}`;
    return new Promise((resolve, reject) => {
      this.own.set(id, { resolve, reject });
      this.o.upstream.send({ jsonrpc: '2.0', id, method, params }).catch(reject);
    });
  }
  /** At start (once the agent has initialized): a tool that collides with `_agent_judge` stops the proxy. */
  protected async checkToolsAtStart(): Promise<void> {
    try {
      await this.tools.loadAll();
    } catch (err) {
      if (err instanceof ToolNameCollisionError) this.fatal(err);
      else this.o.logger.warn({ err: (err as Error).message }, "could not list the upstream's tools");
    }
  }
  protected answer(id: Id, result: CallAnswer | Record<string, unknown>): void {
    this.toAgent({ jsonrpc: '2.0', id, result });
  }
  /** A forwarded call, until its answer and outcome are out: an upstream that went away waits for it. */
  protected async whileForwarding<T>(call: Promise<T>): Promise<T> {
    this.forwarding.add(call);
    try {
      return await call;
    } finally {
      this.forwarding.delete(call);
    }
  }

  /** Sends one request upstream and waits for its response. */
  protected forward(request: Msg): Promise<Msg> {
    const id = request.id as Id;
    this.track(request);
    return new Promise((resolve, reject) => {
      this.forwarded.set(id, { resolve, reject });
      this.o.upstream.send(request as JSONRPCMessage).catch((e: Error) => {
        this.forwarded.delete(id);
        this.untrack(id);
        reject(e);
      });
    });
  }
  /** Resolves once every audit line started so far is written (the proxy waits for it before exiting). */
  flushAudit(): Promise<void> {
    return this.audit.flushed();
  }
}
