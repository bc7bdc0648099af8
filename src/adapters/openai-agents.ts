/**
 * `agent-judge/openai-agents`: the OpenAI Agents SDK (`@openai/agents`) adapter. One call puts every function tool of
 * an agent behind the gate service (its URL and this agent's token): `withAgentJudge(agent, { url, token })`. It uses
 * the SDK's own approval hook: the tool's `needsApproval` asks the gate; a call still being decided is the SDK's
 * interruption (`result.interruptions`, a durable `RunState`), and the run resumed after the decision asks the gate
 * again. The tool's `invoke` performs only
 * a `forward` and reports its outcome on the lease; every other answer is the text the model reads as the tool's
 * result, and the tool never runs. The SDK is imported as types only: the rest of the package works without it.
 * docs/frameworks.md.
 */
import type { Agent, AgentOutputType, FunctionTool, RunContext, Tool, ToolInputParameters } from '@openai/agents';
import { BadInputError } from '../contracts/errors';
import { modelText } from '../gate/texts';
import type { GateToolCall } from '../gate/types';
import {
  editNote,
  gateOf,
  isRecord,
  performAndReport,
  performedInput,
  type AdapterAnswer,
  type AdapterOptions,
} from './options';

/** The runtime name calls from this adapter carry (part of each call's identity). */
export const OPENAI_AGENTS_RUNTIME = 'openai-agents';

export type AgentJudgeOptions = AdapterOptions & {
  /** The `server` the policy's rules match these tools under (default `agents`). */
  server?: string;
  /**
   * A call still being decided when the gate's hold ends: `interrupt` (default) makes it the SDK's interruption: the
   * run stops with it in `result.interruptions`; run `result.state` again after the decision (it asks the gate again).
   * `answer`: the model reads "pending, retry after ..." as the tool's result and the run goes on.
   */
  pending?: 'interrupt' | 'answer';
};

/** The answers asked in `needsApproval`, taken by `invoke` for the same call id (one per call; taken once). */
type Answers = Map<string, AdapterAnswer>;

/**
 * `tool` behind the gate: the same tool (name, schema, description) whose `needsApproval` asks the gate and whose
 * `invoke` runs the original only for a `forward`. Function tools only: hosted tools run on the model provider's side,
 * where nothing can hold them, so they are refused (`BadInputError`) rather than passed through unjudged.
 */
export function judged<TContext>(tool: Tool<TContext>, options: AgentJudgeOptions): Tool<TContext> {
  if (tool.type !== 'function') {
    const name = 'name' in tool ? ` ${tool.name}` : '';
    throw new BadInputError(
      `agent-judge cannot judge the ${tool.type} tool${name}: only function tools run where the gate can hold them`,
    );
  }
  return judgedFunction(tool, options);
}

/**
 * The agent with every tool behind the gate (a clone: `agent` itself is unchanged), or the tool list judged. Handoff
 * agents keep their own tools: wrap each agent that has tools.
 */
export function withAgentJudge<TContext, TOutput extends AgentOutputType>(
  agent: Agent<TContext, TOutput>,
  options: AgentJudgeOptions,
): Agent<TContext, TOutput>;
export function withAgentJudge<TContext>(
  tools: readonly Tool<TContext>[],
  options: AgentJudgeOptions,
): Tool<TContext>[];
export function withAgentJudge<TContext, TOutput extends AgentOutputType>(
  agentOrTools: Agent<TContext, TOutput> | readonly Tool<TContext>[],
  options: AgentJudgeOptions,
): Agent<TContext, TOutput> | Tool<TContext>[] {
  if (Array.isArray(agentOrTools)) return (agentOrTools as readonly Tool<TContext>[]).map((t) => judged(t, options));
  const agent = agentOrTools as Agent<TContext, TOutput>;
  return agent.clone({ tools: agent.tools.map((t) => judged(t, options)) });
}

function judgedFunction<TContext>(
  tool: FunctionTool<TContext, ToolInputParameters, unknown>,
  options: AgentJudgeOptions,
): FunctionTool<TContext, ToolInputParameters, unknown> {
  const gate = gateOf(options);
  const answers: Answers = new Map();
  const callOf = (args: unknown, callId: string | undefined): GateToolCall => ({
    runtime: OPENAI_AGENTS_RUNTIME,
    server: options.server ?? 'agents',
    tool: tool.name,
    arguments: isRecord(args) ? args : { input: args },
    agent: {
      justification:
        tool.description.trim() !== ''
          ? tool.description.slice(0, 4096)
          : `${tool.name} call; the tool gave no description of its purpose`,
    },
    ...(callId ? { session: { callId } } : {}),
  });

  return {
    ...tool,
    // The SDK's approval hook, called before the tool runs (and again when an interrupted run is resumed).
    needsApproval: async (_ctx: RunContext, args: unknown, callId?: string): Promise<boolean> => {
      // Without a call id the answer cannot be handed to `invoke`: it asks the gate itself.
      if (!callId) return false;
      const previous = answers.get(callId);
      if (previous && previous.kind !== 'pending') return false;
      const call = callOf(args, callId);
      const answer = await gate.decide(call);
      answers.set(callId, answer);
      if (answer.kind === 'pending') options.onPending?.(answer, call);
      return answer.kind === 'pending' && (options.pending ?? 'interrupt') === 'interrupt';
    },
    invoke: async (runContext, input, details) => {
      const callId = details?.toolCall?.callId;
      let answer = callId ? answers.get(callId) : undefined;
      if (callId) answers.delete(callId);
      const call = callOf(parseArguments(input), callId);
      // Not asked yet (no call id, or an approval given on the SDK's side while the gate said pending): ask now. The
      // SDK's own `state.approve()` never runs a call the gate has not forwarded.
      if (!answer || answer.kind === 'pending') {
        answer = await gate.decide(call, { signal: details?.signal });
        if (answer.kind === 'pending') options.onPending?.(answer, call);
      }
      if (answer.kind === 'cancelled') return 'agent-judge: cancelled, not performed.';
      if (answer.kind !== 'forward') return modelText(answer) ?? 'agent-judge REJECT. Not performed.';
      // Exactly what was approved (a person's edits included), never the input as the model sent it. A tool error
      // the SDK turned into text (the tool's errorFunction) is the tool's answer: reported `ok`.
      const approved = JSON.stringify(performedInput(parseArguments(input), answer));
      const output = await performAndReport(answer, call, options, () =>
        Promise.resolve(tool.invoke(runContext, approved, details)),
      );
      // Approved with edits: the model is told what ran before the tool's text (another output, e.g. structured, is
      // the application's own and passes as it is).
      const note = editNote(answer);
      return note !== undefined && typeof output === 'string' ? `${note}\n${output}` : output;
    },
  };
}

function parseArguments(input: string): unknown {
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return input;
  }
}
