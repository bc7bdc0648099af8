/**
 * The shape of one `audit export` line, for reports read from a file (`report --input`): checked field by field so
 * a truncated or hand-edited export is refused with the line and field named, not half-counted.
 */
import { z } from 'zod';
import { VerdictSchema } from '../contracts/verdict';

export const AuditRecordSchema = z.looseObject({
  proposal_id: z.string(),
  workflow_id: z.string().min(1),
  status: z.string(),
  verdict: VerdictSchema.nullable(),
  verdicts: z.array(VerdictSchema),
  agent_id: z.string().nullable(),
  action_type: z.string().nullable(),
  tier: z.string().nullable(),
  started_at: z.iso.datetime({ offset: true }),
  closed_at: z.string().nullable(),
  decisions: z.array(
    z.looseObject({ decision: z.enum(['approve', 'reject']), approver: z.string(), accepted: z.boolean() }),
  ),
});
