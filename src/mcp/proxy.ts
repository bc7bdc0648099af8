/**
 * The MCP judge proxy as a message-level relay between an agent (the front transport) and one upstream MCP server:
 * every message passes through unchanged in both directions (initialize and capabilities, resources, prompts,
 * sampling, elicitation, roots, logging, progress, list-changed, pagination, cancellation) except `tools/list`
 * results (each tool gains the optional `_agent_judge` argument) and `tools/call` requests, which are mapped by
 * `spec.mcp` and judged before anything reaches the upstream. Fails closed: a call is forwarded only when it is
 * no-judge by the policy, or its proposal is approved (or in shadow mode) and this proxy holds the lease to perform
 * it; any error on the way is a refusal, never a forward.
 *
 * One concept per file, layered by `extends`: relay.ts (the messages both ways), calls.ts (a `tools/call` through the
 * gate), task-calls.ts (a task-augmented call), and this class, which answers `tasks/*` requests; the tool cache and
 * the pass-through audit lines are tool-cache.ts and pass-through-audit.ts.
 */
import { ErrorCode, RELATED_TASK_META_KEY } from '@modelcontextprotocol/sdk/types.js';
import { statusOfRun } from '../client/performer';
import { holdForMs } from '../contracts/mcp';
import type { GateToolCall } from '../gate';
import { refusedAnswer } from './answers';
import { MCP_RUNTIME } from './mapping';
import type { Id, Msg } from './relay';
import { McpTaskCalls, type LiveTask } from './task-calls';
import { isTerminal, taskOf, workingMessage } from './tasks';
import { toolDefinitionHash } from './tools';

export type { ProxyOptions } from './proxy-options';
export type { PassThroughRecord } from './pass-through-audit';

/** The MCP judge proxy for one agent session and one upstream. */
export class McpJudgeProxy extends McpTaskCalls {
  /**
   * The task of `taskId` for this agent and server: from this session, or read back from its record (a task of an
   * earlier proxy or session). An unfinished task nobody follows is taken up again from its proposal: one already
   * performed answers from the recorded outcome; otherwise a runner follows it (and performs an approval once).
   */
  protected async taskFor(taskId: string): Promise<LiveTask | undefined> {
    let t = this.tasks.get(taskId);
    if (!t) {
      const record = this.taskRecords.read(taskId, this.o.agentId, this.o.server);
      if (!record) return undefined;
      t = this.keepTask(record);
    }
    if (isTerminal(t.record.status) || t.running || t.local) return t;
    const status = await statusOfRun(this.o.temporal.client, t.record.workflow_id).catch(() => null);
    if (status?.caller?.outcome) {
      const { outcome, detail } = status.caller;
      const text =
        `performed once by agent-judge (outcome ${outcome}${detail ? `: ${detail}` : ''}); the upstream's answer ` +
        'was not kept (the proxy stopped before it was recorded). Proposal ' +
        status.proposal_id;
      this.finishTask(t, outcome === 'ok' ? 'completed' : 'failed', {
        result: { content: [{ type: 'text', text }], isError: outcome !== 'ok' },
      });
      return t;
    }
    if (status) t.record.status_message = workingMessage(status);
    const tool = await this.tools.named(t.record.tool).catch(() => undefined);
    if (!tool || toolDefinitionHash(tool) !== t.record.tool_definition_hash) {
      this.finishTask(t, 'failed', {
        result: refusedAnswer(
          `the upstream's tool ${JSON.stringify(t.record.tool)} is gone or its definition changed since the task ` +
            'was created; call it again',
        ) as unknown as Msg,
      });
      return t;
    }
    const call: GateToolCall = {
      runtime: MCP_RUNTIME,
      server: this.o.server,
      tool: t.record.tool,
      toolDefinitionHash: t.record.tool_definition_hash,
      arguments: t.record.arguments,
      agent: t.record.agent_statement,
    };
    t.control = new AbortController();
    void this.runTask(t, call);
    return t;
  }

  protected async handleTaskRequest(m: Msg): Promise<void> {
    const id = m.id as Id;
    if (m.method === 'tasks/list') return this.listTasks(m);
    const taskId = m.params?.taskId as string;
    const control = new AbortController();
    this.held.set(id, control);
    try {
      const t = await this.taskFor(taskId);
      if (control.signal.aborted) return;
      if (!t) return this.taskError(id, `Task not found: ${taskId}`);
      switch (m.method) {
        case 'tasks/get': {
          if (!isTerminal(t.record.status) && t.record.workflow_id) {
            const status = await statusOfRun(this.o.temporal.client, t.record.workflow_id).catch(() => null);
            if (status && !isTerminal(t.record.status)) t.record.status_message = workingMessage(status);
          }
          return this.answer(id, { ...taskOf(t.record) });
        }
        case 'tasks/cancel': {
          if (isTerminal(t.record.status)) {
            return this.taskError(id, `Cannot cancel task in terminal status: ${t.record.status}`);
          }
          if (t.performing) {
            return this.taskError(id, 'the call was already forwarded to the upstream once; it cannot be cancelled');
          }
          t.control.abort();
          this.finishTask(
            t,
            'cancelled',
            { result: refusedAnswer('the client cancelled the task') as unknown as Msg },
            'cancelled by the client: not performed. agent-judge does not withdraw the proposal: it stays open ' +
              'for its approver, and an approval is performed only if the identical call comes again.',
          );
          return this.answer(id, { ...taskOf(t.record) });
        }
        case 'tasks/result': {
          // Waits for the end, bounded by the task's ttl and one more hold (the runner's last round).
          const left = Date.parse(t.record.created_at) + t.record.ttl_ms + holdForMs(this.o.settings) - Date.now();
          const aborted = new Promise<void>((r) => control.signal.addEventListener('abort', () => r(), { once: true }));
          await Promise.race([t.done, aborted, new Promise((r) => setTimeout(r, Math.max(0, left)).unref())]);
          if (control.signal.aborted) return; // a cancelled request gets no response
          if (!isTerminal(t.record.status)) {
            return this.taskError(id, `task ${taskId} is not finished yet; ask again`, ErrorCode.InternalError);
          }
          const result = t.record.result ?? {
            content: [{ type: 'text', text: t.record.status_message ?? t.record.status }],
            isError: t.record.status !== 'completed',
          };
          if (result.error) {
            return this.toAgent({ jsonrpc: '2.0', id, error: result.error });
          }
          const meta = (result._meta ?? {}) as Record<string, unknown>;
          return this.answer(id, { ...result, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId } } });
        }
      }
    } catch (err) {
      if (!control.signal.aborted) this.taskError(id, (err as Error).message, ErrorCode.InternalError);
    } finally {
      this.held.delete(id);
    }
  }

  /** This session's tasks, then (first page only) the upstream's own when it has tasks; a cursor is the upstream's. */
  protected async listTasks(m: Msg): Promise<void> {
    const id = m.id as Id;
    if (this.upstreamTasks && m.params?.cursor !== undefined) {
      this.track(m);
      this.toUpstream(m);
      return;
    }
    const ours = [...this.tasks.values()].filter((t) => !t.local).map((t) => taskOf(t.record));
    if (!this.upstreamTasks) return this.answer(id, { tasks: ours });
    const r = await this.ownRequest('tasks/list', {}).catch(() => null);
    const theirs = (r?.result ?? {}) as Record<string, unknown>;
    const tasks: unknown[] = Array.isArray(theirs.tasks) ? (theirs.tasks as unknown[]) : [];
    this.answer(id, { ...theirs, tasks: [...ours, ...tasks] });
  }
}
