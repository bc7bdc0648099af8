/**
 * MCP tasks in the proxy (src/mcp/tasks.ts holds their pure parts, docs/mcp.md#mcp-tasks): a task-augmented
 * `tools/call` becomes a task answered at once, whose runner follows the call's proposal and performs an approval
 * once; its record is kept on disk so a later proxy takes it up (proxy.ts answers the `tasks/*` requests).
 */
import { dirname, join } from 'node:path';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { holdForMs } from '../contracts/mcp';
import type { GateAnswer, GateToolCall, Lease } from '../gate';
import { refusedAnswer, renderGateAnswer, type CallAnswer } from './answers';
import { McpCalls, withEditNote } from './calls';
import { judgeFailure } from './judged-call';
import { MCP_RUNTIME, type ToolCall } from './mapping';
import type { ProxyOptions } from './proxy-options';
import type { Id, Msg } from './relay';
import {
  isOwnTaskId,
  isTerminal,
  localTaskId,
  MAX_LIVE_TASKS,
  MAX_REMEMBERED_TASKS,
  TaskRecords,
  taskIdOf,
  taskOf,
  taskTtlMs,
  type TaskRecord,
  type TaskStatus,
} from './tasks';
import type { AgentJudgeArgument } from './tools';

/** One MCP task this session knows (src/mcp/tasks.ts): its record, and the runner following it here, if any. */
export interface LiveTask {
  record: TaskRecord;
  /** Aborts the runner (tasks/cancel, the agent or the upstream went away). */
  control: AbortController;
  /** A runner in this process follows the proposal (false for a task read back from its record, until resumed). */
  running: boolean;
  /** The call went upstream: too late to cancel. */
  performing: boolean;
  /** Resolves when the task is finished. */
  done: Promise<void>;
  finish: () => void;
  /** Kept in memory only (refused before any proposal): no record. */
  local: boolean;
}
/** Task-augmented `tools/call`s: this session's tasks, their records and runners. */
export abstract class McpTaskCalls extends McpCalls {
  /** This session's own MCP tasks, by task id (oldest first). */
  protected readonly tasks = new Map<string, LiveTask>();
  protected readonly taskRecords: TaskRecords;

  constructor(o: ProxyOptions) {
    super(o);
    this.taskRecords = new TaskRecords(o.taskDir ?? join(dirname(o.auditLog), 'mcp-tasks'));
  }

  protected stopTaskRunners(): void {
    for (const t of this.tasks.values()) if (!t.performing) t.control.abort();
  }

  // --- MCP tasks (src/mcp/tasks.ts, docs/mcp.md#mcp-tasks) ---------------------------------------

  /** tasks/get, tasks/result, tasks/cancel with one of the proxy's own task ids, and every tasks/list. */
  protected isOwnTaskRequest(m: Msg): boolean {
    if (m.method === 'tasks/list') return true;
    if (m.method === 'tasks/get' || m.method === 'tasks/result' || m.method === 'tasks/cancel') {
      return isOwnTaskId(m.params?.taskId);
    }
    return false;
  }

  protected taskError(id: Id, message: string, code: number = ErrorCode.InvalidParams): void {
    this.toAgent({ jsonrpc: '2.0', id, error: { code, message } });
  }

  /** Remembers a task in this session (finished ones beyond the bound are forgotten here; their records stay). */
  protected keepTask(record: TaskRecord, local = false): LiveTask {
    let finish: () => void = () => undefined;
    const done = new Promise<void>((r) => (finish = r));
    const t: LiveTask = {
      record,
      control: new AbortController(),
      running: false,
      performing: false,
      done,
      finish,
      local,
    };
    if (isTerminal(record.status)) finish();
    this.tasks.delete(record.task_id);
    this.tasks.set(record.task_id, t);
    if (this.tasks.size > MAX_REMEMBERED_TASKS) {
      for (const [taskId, old] of this.tasks) {
        if (!isTerminal(old.record.status)) continue;
        this.tasks.delete(taskId);
        break;
      }
    }
    return t;
  }

  protected saveTask(t: LiveTask): void {
    if (t.local) return;
    try {
      this.taskRecords.write(t.record);
    } catch (err) {
      this.o.logger.error(
        { task_id: t.record.task_id, err: (err as Error).message },
        'could not write the task record',
      );
    }
  }

  /** The task is finished: its record says how, with what `tasks/result` answers; the agent is told. */
  protected finishTask(
    t: LiveTask,
    status: TaskStatus,
    answer: { result?: Record<string, unknown>; error?: { code: number; message: string } },
    message?: string,
    /** Tell the agent (`notifications/tasks/status`); not for a task it has not been answered yet. */
    notify = true,
  ): void {
    if (isTerminal(t.record.status)) return;
    const text = (answer.result?.content as Array<{ text?: string }> | undefined)?.map((c) => c.text ?? '').join('\n');
    t.record = {
      ...t.record,
      status,
      status_message: message ?? (status === 'completed' ? null : (text ?? answer.error?.message ?? null)),
      last_updated_at: new Date().toISOString(),
      ...(answer.result ? { result: answer.result } : {}),
      ...(answer.error ? { result: { error: answer.error } } : {}),
    };
    this.saveTask(t);
    t.finish();
    if (notify) this.toAgent({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: { ...taskOf(t.record) } });
  }

  /**
   * A task-augmented `tools/call` from an agent that takes tasks: answered with a CreateTaskResult as soon as the
   * call's proposal is known (started, or the identical call's open one found), after its record is on disk. The
   * runner then follows the proposal until it is decided or the task's ttl ends, and performs an approval once.
   */
  protected async handleTaskCall(m: Msg): Promise<void> {
    const id = m.id as Id;
    const params = m.params ?? {};
    let live = 0;
    for (const t of this.tasks.values()) if (!isTerminal(t.record.status)) live += 1;
    if (live >= MAX_LIVE_TASKS) {
      return this.taskError(
        id,
        `agent-judge: this session already has ${MAX_LIVE_TASKS} unfinished tasks; wait for one, or cancel one ` +
          '(tasks/cancel), before the next task-augmented call',
        ErrorCode.InvalidRequest,
      );
    }
    const control = new AbortController();
    this.held.set(id, control);
    const ttl = taskTtlMs((params.task as { ttl?: unknown }).ttl, holdForMs(this.o.settings));
    const now = () => new Date().toISOString();
    /** A task already finished when it is answered (refused before, or decided without, a proposal to follow). */
    const finishedTask = (answer: CallAnswer, workflowId?: string, proposalId = '', sequence = 0) => {
      const record = this.newRecord(workflowId, proposalId, sequence, ttl, params, null);
      const t = this.keepTask(record, workflowId === undefined);
      this.finishTask(t, 'failed', { result: answer as unknown as Record<string, unknown> }, undefined, false);
      this.answer(id, { task: taskOf(t.record) });
    };
    try {
      const prepared = await this.prepare(params);
      if ('refusal' in prepared) return finishedTask(prepared.refusal);
      const { call, agent } = prepared;
      const gateCall: GateToolCall = { runtime: MCP_RUNTIME, ...call, agent, session: { callId: String(id) } };
      const upstreamParams = withoutTaskParams(prepared.upstreamParams);
      let task: LiveTask | undefined;
      let joined: LiveTask | undefined;
      const onProposal = (p: { workflowId: string; proposalId: string; sequence: number }): boolean => {
        if (task) return true;
        const existing = this.tasks.get(taskIdOf(p.workflowId));
        if (existing && !isTerminal(existing.record.status) && existing.running) {
          joined = existing; // the identical call's task: the same proposal, one runner
          return false;
        }
        const record = this.newRecord(p.workflowId, p.proposalId, p.sequence, ttl, upstreamParams, {
          call,
          agent,
        });
        record.created_at = now();
        task = this.keepTask(record);
        task.running = true;
        task.control = control;
        this.saveTask(task); // on disk before the agent hears of the task
        this.held.delete(id); // answered: a cancellation of the request no longer touches the task
        this.answer(id, { task: taskOf(task.record) });
        return true;
      };
      const answer = await this.gate.decide(gateCall, { signal: control.signal, onProposal });
      if (joined) return this.answer(id, { task: taskOf(joined.record) });
      if (answer.kind === 'cancelled' && !task) return; // a cancelled request gets no response
      if (answer.kind !== 'refused' && !(answer.kind === 'forward' && answer.lease === null)) {
        this.o.onJudgedCall?.(call.tool);
      }
      if (!task) {
        if (answer.kind === 'forward' && answer.lease === null) {
          // no-judge: today's pass-through, the request unchanged (an upstream that takes tasks answers with its own)
          return await this.whileForwarding(
            this.passThrough({ ...m, params: prepared.upstreamParams }, call, answer.rule),
          );
        }
        if (answer.kind === 'forward') {
          const sequence = answer.lease!.status.proposal.performer?.sequence ?? 0;
          onProposal({ workflowId: answer.lease!.workflowId, proposalId: answer.lease!.proposalId, sequence });
        } else if (answer.kind === 'deny' || answer.kind === 'clarify') {
          return finishedTask(renderGateAnswer(answer), answer.workflowId, answer.proposalId);
        } else if (answer.kind !== 'cancelled') {
          return finishedTask(renderGateAnswer(answer));
        }
      }
      if (task) await this.runTask(task, gateCall, answer);
    } catch (err) {
      if (control.signal.aborted) return;
      if (this.held.has(id)) finishedTask(refusedAnswer(judgeFailure(err, this.o.temporal.client)));
    } finally {
      this.held.delete(id);
    }
  }

  protected newRecord(
    workflowId: string | undefined,
    proposalId: string,
    sequence: number,
    ttl: number,
    requestParams: Record<string, unknown>,
    c: { call: ToolCall; agent: AgentJudgeArgument } | null,
  ): TaskRecord {
    const at = new Date().toISOString();
    return {
      task_id: workflowId === undefined ? localTaskId() : taskIdOf(workflowId),
      workflow_id: workflowId ?? '',
      proposal_id: proposalId,
      sequence,
      agent: this.o.agentId,
      server: this.o.server,
      tool: c?.call.tool ?? (typeof requestParams.name === 'string' ? requestParams.name : ''),
      tool_definition_hash: c?.call.toolDefinitionHash ?? '',
      arguments: c?.call.arguments ?? {},
      agent_statement: c?.agent ?? {},
      request_params: c ? requestParams : {},
      created_at: at,
      last_updated_at: at,
      ttl_ms: ttl,
      status: 'working',
      status_message: null,
    };
  }

  /**
   * Follows a task's proposal until it is decided (each round holds as a call would, `holdFor`), the task's ttl ends,
   * or it is cancelled; an approval leased to this proxy is performed once, by `performTask`.
   */
  protected async runTask(t: LiveTask, call: GateToolCall, first?: GateAnswer): Promise<void> {
    const deadline = Date.parse(t.record.created_at) + t.record.ttl_ms;
    let answer = first;
    t.running = true;
    try {
      for (;;) {
        answer ??= await this.gate.decide(call, { signal: t.control.signal, sequence: t.record.sequence });
        if (answer.kind === 'cancelled' || isTerminal(t.record.status)) return; // tasks/cancel, or the proxy ends
        if (answer.kind === 'forward') {
          if (answer.lease === null) {
            return this.finishTask(t, 'failed', {
              result: refusedAnswer('the policy no longer judges this call; call it again') as unknown as Msg,
            });
          }
          return await this.whileForwarding(this.performTask(t, answer.lease));
        }
        if (answer.kind === 'pending') {
          if (Date.now() >= deadline) {
            return this.finishTask(
              t,
              'failed',
              { result: renderGateAnswer(answer) as unknown as Msg },
              `the task's ttl ended before the decision: not performed. Proposal ${answer.proposalId} stays open; ` +
                'the identical call after the decision is performed once if approved.',
            );
          }
          t.record.status_message = `held by agent-judge: waiting for ${
            answer.waitingFor === 'human' ? 'a person to decide' : 'the judge'
          } (proposal ${answer.proposalId})`;
          answer = undefined;
          continue;
        }
        return this.finishTask(t, 'failed', { result: renderGateAnswer(answer) as unknown as Msg });
      }
    } catch (err) {
      if (!t.control.signal.aborted) {
        this.finishTask(t, 'failed', {
          result: refusedAnswer(judgeFailure(err, this.o.temporal.client)) as unknown as Msg,
        });
      }
    } finally {
      t.running = false;
    }
  }

  /**
   * THE one place a task's approved call goes upstream, exactly once (as `forwardApproved` for a plain call): under
   * the proxy's own request id, without `task` (the upstream performs it as an ordinary call); its result becomes the
   * task's, then the outcome is reported.
   */
  protected async performTask(t: LiveTask, lease: Lease): Promise<void> {
    if (t.control.signal.aborted || this.closed || isTerminal(t.record.status)) {
      await lease
        .report('not_performed', 'the task was cancelled after the call was leased')
        .catch((err: Error) =>
          this.o.logger.error({ workflow_id: lease.workflowId, err: err.message }, 'could not record the outcome'),
        );
      return;
    }
    t.performing = true;
    let outcome: 'ok' | 'tool_error' | 'performer_failure';
    let detail: string | undefined;
    // Approved with edits (docs/edits.md): the upstream gets exactly the edited arguments, as for a plain call.
    const edited = lease.edited;
    const params = edited ? { ...t.record.request_params, arguments: edited.arguments } : t.record.request_params;
    try {
      const answered = await this.ownRequest('tools/call', params);
      const response = edited ? withEditNote(answered, edited.changes) : answered;
      if (response.error) {
        outcome = 'performer_failure';
        detail = JSON.stringify(response.error).slice(0, 2000);
        this.finishTask(t, 'failed', { error: response.error as { code: number; message: string } });
      } else {
        const result = (response.result ?? {}) as Record<string, unknown>;
        outcome = result.isError ? 'tool_error' : 'ok';
        this.finishTask(t, outcome === 'ok' ? 'completed' : 'failed', { result });
      }
    } catch (err) {
      outcome = 'performer_failure';
      detail = (err as Error).message;
      this.finishTask(t, 'failed', {
        result: refusedAnswer(`the upstream failed after the call was forwarded: ${detail}`) as unknown as Msg,
      });
    }
    await lease
      .report(outcome, detail)
      .catch((err: Error) =>
        this.o.logger.error({ workflow_id: lease.workflowId, err: err.message }, 'could not record the outcome'),
      );
  }
}

/** The `tools/call` params as the proxy sends them upstream for a task: no `task`, no progress token. */
function withoutTaskParams(params: Record<string, unknown>): Record<string, unknown> {
  const { task: _task, _meta, ...rest } = params;
  const meta = { ...((_meta ?? {}) as Record<string, unknown>) };
  delete meta.progressToken;
  return Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
}
