/**
 * What every framework adapter takes and does alike: where the gate service is (its URL and this agent's token), who
 * is told of a pending call, and the one way an approved call is performed and reported: with exactly the arguments
 * the answer carries (a person's edits included), the outcome recorded as it happened. Each adapter adds its own
 * `server` default and `pending` modes.
 */
import { editedText } from '../gate/texts';
import { remoteGate } from '../gate/remote';
import type { CallGate, GateAnswer, GateOutcome, GateToolCall, PerformerLease } from '../gate/types';

/** How an adapter reaches agent-judge. */
export type GateAccess =
  /** The gate service (`agent-judge dev` or `agent-judge gate`): its URL and this agent's token. */
  | { url: string; token: string; timeoutMs?: number }
  /** A gate given directly (`remoteGate(...)` with options of your own, or an in-process gate inside agent-judge). */
  | { gate: CallGate };

export type AdapterOptions = GateAccess & {
  /**
   * Told when a call is left pending (the proposal waiting for a judge or a person): e.g. show the user which
   * proposal to decide (`agent-judge decide <proposalId> approve|reject`).
   */
  onPending?: (answer: Extract<GateAnswer<PerformerLease>, { kind: 'pending' }>, call: GateToolCall) => void;
  /** Where a lease whose outcome could not be recorded is told (default: a process warning). */
  onReportError?: (err: Error, call: GateToolCall) => void;
};

/** The answer an adapter gets. */
export type AdapterAnswer = GateAnswer<PerformerLease>;
/** An answer that says: perform this. */
export type Forward = Extract<AdapterAnswer, { kind: 'forward' }>;

/** The gate the options name. */
export function gateOf(options: GateAccess): CallGate {
  if ('gate' in options) return options.gate;
  return remoteGate({
    url: options.url,
    token: options.token,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
}

/**
 * What to hand the tool: the forward's arguments (a person's edits included) in the shape the tool was called with.
 * A call whose input was not an object went to the gate as `{ input }`, and comes back out of it the same way.
 */
export function performedInput(original: unknown, forward: Forward): unknown {
  if (isRecord(original)) return forward.arguments;
  return Object.hasOwn(forward.arguments, 'input') ? forward.arguments.input : original;
}

/**
 * What the model is told of a call a person approved with edits (the MCP proxy's words, docs/edits.md): it ran as
 * edited, not as sent, and what changed. Without it the model would take the tool's answer for its own call's and
 * tell the user so. `undefined` for a call that ran as sent.
 */
export function editNote(forward: Forward): string | undefined {
  const changes = forward.lease?.edited?.changes;
  if (!changes || changes.length === 0) return undefined;
  return editedText(changes);
}

/**
 * Performs a forwarded call once and reports what happened on its lease: `performer_failure` when `perform` throws
 * (rethrown), else the outcome `outcomeOf` reads from the result (default `ok`). A report that cannot be recorded goes
 * to `onReportError`, never to the tool's caller.
 */
export async function performAndReport<T>(
  forward: Forward,
  call: GateToolCall,
  options: Pick<AdapterOptions, 'onReportError'>,
  perform: () => Promise<T>,
  outcomeOf: (result: T) => { outcome: GateOutcome; detail?: string } = () => ({ outcome: 'ok' }),
): Promise<T> {
  const lease = forward.lease;
  let result: T;
  try {
    result = await perform();
  } catch (err) {
    if (lease) await reportOutcome(lease.report('performer_failure', detailOf((err as Error).message)), call, options);
    throw err;
  }
  if (lease) {
    const { outcome, detail } = outcomeOf(result);
    await reportOutcome(lease.report(outcome, detail === undefined ? undefined : detailOf(detail)), call, options);
  }
  return result;
}

/** Awaits a lease's report; a failure goes to `onReportError` (or a process warning), never to the tool's caller. */
export async function reportOutcome(
  recording: Promise<void>,
  call: GateToolCall,
  options: Pick<AdapterOptions, 'onReportError'>,
): Promise<void> {
  try {
    await recording;
  } catch (err) {
    if (options.onReportError) options.onReportError(err as Error, call);
    else process.emitWarning(`agent-judge: the outcome of ${call.tool} was not recorded: ${(err as Error).message}`);
  }
}

/** An outcome's detail as the proposal records it (at most 2000 characters). */
export function detailOf(text: string): string {
  return text.length > 2000 ? `${text.slice(0, 1999)}…` : text;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
