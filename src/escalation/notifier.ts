import type { AnnouncementRef, EscalationNotice, ReminderNotice, ResolutionNotice } from '../contracts/escalation';

export type { AnnouncementRef, EscalationNotice, ReminderNotice, ResolutionNotice };

/** A channel that tells people about escalations (log, Discord, ...). */
export interface EscalationNotifier {
  name: string;
  /** Must be idempotent per workflow_id: a retried activity never posts twice. */
  announce(notice: EscalationNotice): Promise<AnnouncementRef[]>;
  remind(notice: ReminderNotice): Promise<void>;
  resolve(notice: ResolutionNotice): Promise<void>;
}
