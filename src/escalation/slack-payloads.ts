/**
 * The parts of Slack's interaction payloads the app reads (a button click, a submitted form, the app's own note in a
 * modal), as zod schemas: a payload is untrusted and checked before any of it is used.
 */
import { z } from 'zod';
import { isSlackUserId } from './approvers';
import { MAX_CUSTOM_ID_LENGTH } from './custom-id';
import { isSlackChannelId } from './slack-notifier';

const SlackUserId = z.string().refine(isSlackUserId, 'a Slack user id (U… or W…)');
const SlackChannelId = z.string().refine(isSlackChannelId, 'a Slack channel id (C…, G… or D…)');
const SlackTs = z.string().regex(/^\d{1,12}\.\d{1,8}$/, 'a Slack message ts');

/** The parts of a `block_actions` payload the app reads: checked before any of it is used (it is untrusted). */
export const ClickBody = z.object({
  type: z.literal('block_actions'),
  user: z.object({ id: SlackUserId }),
  team: z.object({ id: z.string().max(40) }).nullish(),
  channel: z.object({ id: SlackChannelId }).optional(),
  message: z.object({ ts: SlackTs }).optional(),
  trigger_id: z.string().min(1).max(200),
});
export const ClickAction = z.object({
  type: z.literal('button'),
  action_id: z.string().max(255),
  block_id: z.string().max(255),
});

/** The parts of a `view_submission` payload the app reads. */
export const ViewSubmissionBody = z.object({
  type: z.literal('view_submission'),
  user: z.object({ id: SlackUserId }),
  team: z.object({ id: z.string().max(40) }).nullish(),
  view: z.object({
    callback_id: z.string().max(MAX_CUSTOM_ID_LENGTH * 2),
    private_metadata: z.string().max(3000),
    state: z.object({
      values: z.record(z.string(), z.record(z.string(), z.object({ value: z.string().max(4096).nullish() }))),
    }),
  }),
});

/** The app's own note in a modal's private_metadata: the message whose button opened it. */
export const ModalNote = z.strictObject({ channel: SlackChannelId, ts: SlackTs });
export type ModalNote = z.infer<typeof ModalNote>;

/** The note back from a modal's private_metadata, or null when it is not one the app wrote. */
export function parseModalNote(raw: string): ModalNote | null {
  try {
    const note = ModalNote.safeParse(JSON.parse(raw));
    return note.success ? note.data : null;
  } catch {
    return null;
  }
}
