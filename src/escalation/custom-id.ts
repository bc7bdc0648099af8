/**
 * The data a Discord button or modal carries back to the bot. It comes from the client, so it is
 * untrusted: it is parsed with one strict pattern and bound to a proposal workflow id, nothing else.
 * The bot keeps no state, so everything a click needs to reach the right workflow is in here.
 */
import { GRANT_ID_RE } from '../contracts/grant';
import { PROPOSAL_WORKFLOW_ID_PREFIX } from '../names';

/** Bumped when the format changes, so old buttons are refused instead of misread. */
export const CUSTOM_ID_PREFIX = 'aj:v1';
/** Discord's own limit on `custom_id`. */
export const MAX_CUSTOM_ID_LENGTH = 100;
/** The text input inside the "reject with reason" modal. */
export const REASON_INPUT_ID = 'reason';
/** Longest reason accepted from the modal (the Update allows 4096; a phone user needs less). */
export const MAX_REASON_LENGTH = 1000;

export const BUTTON_ACTIONS = ['approve', 'reject', 'reject_reason'] as const;
export type ButtonAction = (typeof BUTTON_ACTIONS)[number];

/** Proposal workflow ids: the prefix and 32 lowercase hex characters of the content fingerprint. */
export const PROPOSAL_WORKFLOW_ID_PATTERN = new RegExp(`^${PROPOSAL_WORKFLOW_ID_PREFIX}[0-9a-f]{32}$`);

const BUTTON_PATTERN = new RegExp(
  `^${CUSTOM_ID_PREFIX}:(approve|reject|reject_reason):(${PROPOSAL_WORKFLOW_ID_PREFIX}[0-9a-f]{32})$`,
);
const MODAL_PATTERN = new RegExp(`^${CUSTOM_ID_PREFIX}:reason:(${PROPOSAL_WORKFLOW_ID_PREFIX}[0-9a-f]{32})$`);

export interface ButtonData {
  action: ButtonAction;
  workflowId: string;
}

export function isProposalWorkflowId(id: unknown): id is string {
  return typeof id === 'string' && PROPOSAL_WORKFLOW_ID_PATTERN.test(id);
}

function assertWorkflowId(workflowId: string): void {
  if (!isProposalWorkflowId(workflowId))
    throw new Error(`not a proposal workflow id: ${JSON.stringify(workflowId).slice(0, 80)}`);
}

export function buttonCustomId(action: ButtonAction, workflowId: string): string {
  assertWorkflowId(workflowId);
  return `${CUSTOM_ID_PREFIX}:${action}:${workflowId}`;
}

export function modalCustomId(workflowId: string): string {
  assertWorkflowId(workflowId);
  return `${CUSTOM_ID_PREFIX}:reason:${workflowId}`;
}

/** The button's action and workflow id, or null for anything that is not exactly one of ours. */
export function parseButtonCustomId(raw: unknown): ButtonData | null {
  if (typeof raw !== 'string' || raw.length > MAX_CUSTOM_ID_LENGTH) return null;
  const m = BUTTON_PATTERN.exec(raw);
  if (!m) return null;
  return { action: m[1] as ButtonAction, workflowId: m[2] as string };
}

/** The workflow id a "reject with reason" modal is bound to, or null. */
export function parseModalCustomId(raw: unknown): { workflowId: string } | null {
  if (typeof raw !== 'string' || raw.length > MAX_CUSTOM_ID_LENGTH) return null;
  const m = MODAL_PATTERN.exec(raw);
  return m ? { workflowId: m[1] as string } : null;
}

/**
 * A reason typed into the modal: trimmed, control characters (other than newlines) removed,
 * bounded. Empty means no reason.
 */
export function cleanReason(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const text = raw
    .replace(/\r\n?/g, '\n')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0009\u000b-\u001f\u007f]/g, '')
    .trim();
  if (!text) return undefined;
  return text.length > MAX_REASON_LENGTH ? text.slice(0, MAX_REASON_LENGTH) : text;
}

const REVOKE_GRANT_PATTERN = new RegExp(`^${CUSTOM_ID_PREFIX}:revoke_grant:(${GRANT_ID_RE.source.slice(1, -1)})$`);

/** The "Revoke grant" button's data: the grant id, nothing else. */
export function revokeGrantCustomId(grantId: string): string {
  if (!GRANT_ID_RE.test(grantId)) throw new Error(`not a grant id: ${JSON.stringify(grantId).slice(0, 40)}`);
  return `${CUSTOM_ID_PREFIX}:revoke_grant:${grantId}`;
}

/** The grant a "Revoke grant" button names, or null for anything that is not exactly one. */
export function parseRevokeGrantCustomId(raw: unknown): { grantId: string } | null {
  if (typeof raw !== 'string' || raw.length > MAX_CUSTOM_ID_LENGTH) return null;
  const m = REVOKE_GRANT_PATTERN.exec(raw);
  return m ? { grantId: m[1] as string } : null;
}
