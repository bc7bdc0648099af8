/**
 * The governance events of the circle registry (see core.ts): every refusal that matters to people is recorded, the
 * newest held in full, all of them counted exactly.
 */
import type { GovernanceEvent } from '../types';
import { refused, type Refused } from '../../contracts/refusal';
import { iso, RegistryCore } from './core';

export interface EventsView {
  events: GovernanceEvent[];
  /** Every governance event ever recorded (exact). */
  total: number;
  /** How many are still held in full. */
  held: number;
  /** How many left the held window and survive only in the counts (and the logs). */
  archived: number;
  by_kind: Record<string, number>;
  by_code: Record<string, number>;
}
/** Records governance events and shows them. */
export class RegistryEvents extends RegistryCore {
  protected refuseWithEvent(
    kind: GovernanceEvent['kind'],
    code: string,
    from: string | null,
    to: string | null,
    reason: string,
    now: number,
    requestId?: string,
  ): Refused {
    this.recordEvent(kind, code, from, to, reason, now, requestId);
    return refused(code, reason);
  }

  protected recordEvent(
    kind: GovernanceEvent['kind'],
    code: string,
    from: string | null,
    to: string | null,
    reason: string,
    now: number,
    requestId?: string,
  ): void {
    const event: GovernanceEvent = {
      seq: ++this.eventSeq,
      at: iso(now),
      kind,
      code,
      from,
      to,
      reason,
      ...(requestId ? { request_id: requestId } : {}),
    };
    this.events.push(event);
    if (this.events.length > this.config.maxEventsHeld)
      this.events.splice(0, this.events.length - this.config.maxEventsHeld);
    this.totals.total++;
    this.totals.by_kind[kind] = (this.totals.by_kind[kind] ?? 0) + 1;
    this.totals.by_code[code] = (this.totals.by_code[code] ?? 0) + 1;
    this.hooks.onEvent?.(event);
  }

  /** Held events at or after `since` (epoch ms), newest last, at most `limit`; counts are exact. */
  eventsView(filter: { since?: number; limit?: number } = {}): EventsView {
    let events =
      filter.since === undefined
        ? this.events
        : this.events.filter((e) => Date.parse(e.at) >= (filter.since as number));
    if (filter.limit !== undefined && events.length > filter.limit) events = events.slice(events.length - filter.limit);
    return {
      events: events.map((e) => ({ ...e })),
      total: this.totals.total,
      held: this.events.length,
      archived: this.totals.total - this.events.length,
      by_kind: { ...this.totals.by_kind },
      by_code: { ...this.totals.by_code },
    };
  }
}
