import type {
  AnnouncementRef,
  EscalationNotice,
  GrantNotice,
  ReminderNotice,
  ResolutionNotice,
  UncertainExecutionNotice,
} from '../contracts/escalation';

export type {
  AnnouncementRef,
  EscalationNotice,
  GrantNotice,
  ReminderNotice,
  ResolutionNotice,
  UncertainExecutionNotice,
};

/** A channel that tells people about escalations (log, Discord, ...). */
export interface EscalationNotifier {
  name: string;
  /** Must be idempotent per workflow_id: a retried activity never posts twice. */
  announce(notice: EscalationNotice): Promise<AnnouncementRef[]>;
  remind(notice: ReminderNotice): Promise<void>;
  resolve(notice: ResolutionNotice): Promise<void>;
  /**
   * An approved action may or may not have run: tell people what to check. Idempotent per
   * workflow_id. Optional: a channel without it is skipped (the worker's log always says it).
   */
  uncertain?(notice: UncertainExecutionNotice): Promise<void>;
  /**
   * A grant made while deciding an escalated proposal is live: show it, with a "Revoke grant" button, on that
   * proposal's message (found again by its workflow id). Idempotent. Optional, and best effort: a grant works whether
   * or not a channel showed it.
   */
  granted?(notice: GrantNotice): Promise<void>;
}
