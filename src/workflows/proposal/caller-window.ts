/**
 * The caller-window layer of the proposal state (see core.ts): an action its caller (the MCP proxy, a runtime's gate)
 * performs, never agent-judge's executors. Approved, the caller may forward it once until the window's deadline, and
 * reports what happened.
 */
import type { CallerOutcome, CallerRecord } from '../../contracts/caller-outcome';
import { refusal, type Refusal } from '../../contracts/refusal';
import type { Stage } from '../../contracts/status';
import { EscalationState } from './escalation';

/** The window in which the caller performs the approved action, and what it reported. */
export class CallerWindowState extends EscalationState {
  protected _caller: CallerRecord | null = null;
  private _callerUncertain = false;

  /** True when the caller performs the approved action, never agent-judge's executors. */
  get performedByCaller(): boolean {
    return this._proposal.performer?.by === 'caller';
  }
  get caller(): CallerRecord | null {
    return this._caller;
  }

  /** Approved: the caller may now forward the call, until `deadline`. */
  openCallerWindow(deadline: string): void {
    this._caller = { forwarded_at: null, outcome: null, finished_at: null, deadline };
  }

  /** Why a caller outcome is refused now, or null. */
  refuseCallerOutcome(o: CallerOutcome): Refusal | null {
    if (!this.performedByCaller)
      return refusal('caller.not-performer', 'this proposal is performed by agent-judge, not by its caller');
    const c = this._caller;
    if (!c)
      return refusal('wrong-stage', `the proposal is not approved for its caller to perform (stage ${this._stage})`);
    if (c.outcome !== null) return refusal('caller.recorded', `the outcome was already recorded (${c.outcome})`);
    if (o.outcome === 'forwarding' && c.forwarded_at !== null) {
      return refusal(
        'caller.forwarded',
        `the approved call was already forwarded once (at ${c.forwarded_at}); it is never forwarded twice`,
      );
    }
    if (o.outcome === 'abandoned' && c.forwarded_at !== null) {
      return refusal('caller.forwarded', 'the call was forwarded: report ok, tool_error, unknown or upstream_failure');
    }
    if ((o.outcome === 'ok' || o.outcome === 'tool_error' || o.outcome === 'unknown') && c.forwarded_at === null) {
      return refusal('caller.not-forwarded', 'lease the call (forwarding) before reporting what the upstream did');
    }
    return null;
  }

  recordCallerOutcome(o: CallerOutcome, now: string): void {
    const c = this._caller;
    if (!c) return;
    if (o.outcome === 'forwarding') {
      c.forwarded_at = now;
      return;
    }
    c.outcome = o.outcome;
    c.finished_at = now;
    if (o.detail !== undefined) c.detail = o.detail;
  }

  callerDone(): boolean {
    return this._caller?.outcome != null;
  }

  /** Nothing reported before the deadline: never forwarded is abandoned; forwarded without an answer is unknown. */
  callerTimedOut(now: string): void {
    const c = this._caller;
    if (!c || c.outcome !== null) return;
    const forwarded = c.forwarded_at !== null;
    this._callerUncertain = forwarded;
    this.recordCallerOutcome(
      {
        outcome: forwarded ? 'upstream_failure' : 'abandoned',
        detail: forwarded
          ? 'forwarded, but no outcome was reported before the deadline: check the target'
          : 'approved, but not forwarded before the deadline',
      },
      now,
    );
  }

  /** The stage the proposal ends in after its caller's outcome. */
  callerStage(): Stage {
    switch (this._caller?.outcome) {
      case 'ok':
        return 'executed';
      case 'tool_error':
        return 'failed';
      case 'upstream_failure':
        // The upstream answered with an error: not performed. No answer at all: it may have been.
        return this._callerUncertain ? 'uncertain' : 'failed';
      case 'unknown':
        // Performed, and its runtime did not say whether it succeeded: not `executed`, which reads as success.
        return 'uncertain';
      default:
        return 'approved';
    }
  }
}
