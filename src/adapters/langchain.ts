/**
 * `agent-judge/langchain`: the LangChain.js / LangGraph.js adapter (`langchain` 1.x `createAgent`). One middleware puts
 * every tool call of an agent behind the gate service (its URL and this agent's token):
 * `createAgent({ ..., middleware: [agentJudgeMiddleware({ url, token })] })`.
 * It uses LangChain's own tool hook (`wrapToolCall`): the tool runs only for a `forward`, and its outcome is reported
 * on the lease; every other answer is the ToolMessage the model reads, and the tool never runs. A call still being
 * decided is LangGraph's own durable pause, `interrupt()` (kept by the agent's checkpointer); the run resumed after the
 * decision asks the gate again, and the resume value itself decides nothing. docs/frameworks.md.
 */
import { createMiddleware, HumanMessage, ToolMessage, type AgentMiddleware, type ToolCallRequest } from 'langchain';
import { modelText, personText } from '../gate/texts';
import type { GateToolCall } from '../gate/types';
import { editNote, gateOf, isRecord, performAndReport, type AdapterOptions } from './options';

/** The runtime name calls from this adapter carry (part of each call's identity). */
export const LANGCHAIN_RUNTIME = 'langchain';

/** The middleware's name in the agent (LangChain refuses two middlewares of one name). */
export const AGENT_JUDGE_MIDDLEWARE = 'AgentJudgeMiddleware';

/** Resume values one paused call takes before the adapter stops pausing and answers the pending text. */
const MAX_RESUMES = 10_000;

export type AgentJudgeOptions = AdapterOptions & {
  /** The `server` the policy's rules match these tools under (default `agents`, as for the OpenAI Agents SDK). */
  server?: string;
  /**
   * A call still being decided when the gate's hold ends: `interrupt` (default) pauses the run with LangGraph's
   * `interrupt()` (the agent needs a checkpointer); invoke the thread again with `new Command({ resume: ... })` after
   * the decision (the gate is asked again). `answer`: the model reads "pending, retry after ..." as the tool's result
   * and the run goes on.
   */
  pending?: 'interrupt' | 'answer';
};

/**
 * The value of the interrupt a pending call raises (what `result.__interrupt__[i].value` holds): which proposal
 * waits, for whom, and the line to show the person. Informational: the resume value is never read.
 */
export interface AgentJudgeInterrupt {
  type: 'agent-judge';
  proposalId: string;
  workflowId: string;
  waitingFor: 'judge' | 'human';
  status: string;
  deadline: string | null;
  tool: string;
  arguments: Record<string, unknown>;
  toolCallId: string | undefined;
  /** For the person (`agent-judge decide <id> approve|reject ...`), or the pending text while the judge decides. */
  message: string;
}

/**
 * The middleware that sends every tool call of a `createAgent` agent through the gate. Tool calls must run as one
 * task each (`createAgent`'s default `version: 'v2'`): with `v1` all calls of a model turn share one node, and a
 * pause re-runs the calls that had already finished.
 */
export function agentJudgeMiddleware(options: AgentJudgeOptions): AgentMiddleware {
  const gate = gateOf(options);
  return createMiddleware({
    name: AGENT_JUDGE_MIDDLEWARE,
    wrapToolCall: async (request, handler) => {
      const { toolCall } = request;
      const call = callOf(request, options);
      const answer = await gate.decide(call, request.runtime.signal ? { signal: request.runtime.signal } : {});
      if (answer.kind === 'forward') {
        // Exactly what was approved (a person's edits included), never the arguments as the model sent them.
        const approved = isRecord(toolCall.args)
          ? { ...request, toolCall: { ...toolCall, args: answer.arguments } }
          : request;
        const performed = await performAndReport(
          answer,
          call,
          options,
          async () => handler(approved),
          // A ToolMessage with status `error` is the tool's own error answer: it ran, and failed.
          (result) =>
            ToolMessage.isInstance(result) && result.status === 'error'
              ? { outcome: 'tool_error', detail: result.text }
              : { outcome: 'ok' },
        );
        // Approved with edits: the model is told what ran, first in the ToolMessage it reads (after the outcome was
        // taken, so the recorded detail is the tool's own).
        const note = editNote(answer);
        if (note !== undefined && ToolMessage.isInstance(performed)) {
          performed.content =
            typeof performed.content === 'string'
              ? `${note}\n${performed.content}`
              : [{ type: 'text', text: note }, ...performed.content];
        }
        return performed;
      }
      if (answer.kind === 'pending') {
        options.onPending?.(answer, call);
        const interrupt = request.runtime.interrupt;
        if ((options.pending ?? 'interrupt') === 'interrupt' && interrupt) {
          const value: AgentJudgeInterrupt = {
            type: 'agent-judge',
            proposalId: answer.proposalId,
            workflowId: answer.workflowId,
            waitingFor: answer.waitingFor,
            status: answer.status,
            deadline: answer.deadline,
            tool: toolCall.name,
            arguments: call.arguments,
            toolCallId: toolCall.id,
            message: personText(answer) ?? modelText(answer) ?? `agent-judge: ${answer.proposalId} is pending`,
          };
          // LangGraph's durable pause. A resumed run runs this node again from the start, so the gate above was just
          // asked afresh and still says pending: `interrupt()` hands back the resume values this task was given
          // before, in order, and the first one not given yet pauses the run again. The values themselves are never
          // read: only agent-judge's approvers decide, so an application's "approve" cannot run the call.
          // Bounded, for an `interrupt` of the application's own (`userInterrupt`) that returns instead of pausing.
          for (let i = 0; i < MAX_RESUMES; i++) interrupt(value);
        }
      }
      return new ToolMessage({
        content:
          answer.kind === 'cancelled'
            ? 'agent-judge: cancelled, not performed.'
            : (modelText(answer) ?? 'agent-judge REJECT. Not performed.'),
        tool_call_id: toolCall.id ?? '',
        name: toolCall.name,
        status: 'error',
      });
    },
  }) as AgentMiddleware;
}

function callOf(request: ToolCallRequest, options: AgentJudgeOptions): GateToolCall {
  const { toolCall, tool } = request;
  const description = tool && typeof tool.description === 'string' ? tool.description.trim() : '';
  const threadId = request.runtime.configurable?.thread_id;
  const userTask = firstUserMessage(request.state.messages);
  return {
    runtime: LANGCHAIN_RUNTIME,
    server: options.server ?? 'agents',
    tool: toolCall.name,
    arguments: isRecord(toolCall.args) ? toolCall.args : { input: toolCall.args as unknown },
    agent: {
      justification:
        description !== ''
          ? description.slice(0, 4096)
          : `${toolCall.name} call; the tool gave no description of its purpose`,
    },
    ...(userTask !== undefined ? { userTask } : {}),
    session: {
      ...(typeof threadId === 'string' ? { sessionId: threadId } : {}),
      ...(toolCall.id ? { callId: toolCall.id } : {}),
    },
  };
}

/** What the user asked: the thread's first human message, as text (untrusted context for the judge). */
function firstUserMessage(messages: readonly unknown[] | undefined): string | undefined {
  const first = messages?.find((m) => HumanMessage.isInstance(m));
  const text = first?.text.trim();
  return text ? text : undefined;
}
