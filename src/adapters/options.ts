/**
 * What every framework adapter takes and does alike: the gate, who is told of a pending call, and where a lease whose
 * outcome could not be recorded is reported. Each adapter adds its own `server` default and `pending` modes.
 */
import type { Gate, GateAnswer, GateToolCall } from '../gate';

export interface AdapterOptions {
  /** The gate the calls go through (`createGate` from `agent-judge/gate`); its performer runs the approved calls. */
  gate: Gate;
  /**
   * Told when a call is left pending (the proposal waiting for a judge or a person): e.g. show the user which
   * proposal to decide (`agent-judge decide <proposalId> approve|reject`).
   */
  onPending?: (answer: Extract<GateAnswer, { kind: 'pending' }>, call: GateToolCall) => void;
  /** Where a lease whose outcome could not be recorded is told (default: a process warning). */
  onReportError?: (err: Error, call: GateToolCall) => void;
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
