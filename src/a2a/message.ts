/**
 * What a message through the A2A front must carry, and what binds it to its signature. A KNOCK
 * statement is `{from, to, time, nonce}`; the front requires its nonce to be the digest of the
 * message (id and text), so a signed KNOCK admits exactly one message and nobody on the path can
 * swap the text under it. A cross-circle request signs its text itself.
 */
import { createHash } from 'node:crypto';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { Message } from '@a2a-js/sdk';
import { describeIssues } from '../contracts/zod-error';
import { statementBytes } from '../identity/verify';
import {
  SignedBridgeRequestSchema,
  SignedKnockSchema,
  type SignedBridgeRequest,
  type SignedKnock,
} from '../circles/schemas';
import { A2A_METADATA } from './names';

/** Text of a message as the front relays it: the text parts, in order, joined by a newline. */
export function messageText(message: Pick<Message, 'parts'>): string {
  return message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('\n');
}

/** The nonce a KNOCK for this message must carry: base64url SHA-256 over the message id and its text. */
export function messageDigest(message: Pick<Message, 'messageId' | 'parts'>): string {
  const bytes = statementBytes('agent-judge/a2a/v1/message', {
    message_id: message.messageId,
    text: message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')),
  });
  return createHash('sha256').update(bytes).digest('base64url');
}

/** What the caller presented: a KNOCK for a direct message, or a sub-agent's cross-circle request. */
export type Credential = { kind: 'knock'; signed: SignedKnock } | { kind: 'bridge'; signed: SignedBridgeRequest };

function malformed(message: string): never {
  throw new RequestMalformedError({ message });
}

/**
 * Checks the shape of a message addressed to `target` and returns its credential, or throws the
 * SDK's `RequestMalformedError` (JSON-RPC -32602) naming the field. Signatures, freshness, replay
 * and policy are the registry's: this only refuses what cannot be a valid request.
 */
export function credentialOf(message: Message | undefined, target: string, asSent = true): Credential {
  if (!message) malformed('message: required');
  // As sent by the caller (not once the SDK has given it the new task's id).
  if (asSent && message.taskId) malformed('message.taskId: not accepted here; every message starts a task of its own');
  if (asSent && message.referenceTaskIds.length > 0) malformed('message.referenceTaskIds: not accepted here');
  if (message.parts.length === 0) malformed('message.parts: at least one text part is required');
  message.parts.forEach((p, i) => {
    if (p.content?.$case !== 'text') malformed(`message.parts[${i}]: only text parts are accepted`);
  });
  const metadata = (message.metadata ?? {}) as Record<string, unknown>;
  const knock = metadata[A2A_METADATA.knock];
  const bridge = metadata[A2A_METADATA.bridgeRequest];
  if (knock !== undefined && bridge !== undefined)
    malformed(`message.metadata: carry ${A2A_METADATA.knock} or ${A2A_METADATA.bridgeRequest}, not both`);
  if (knock === undefined && bridge === undefined)
    malformed(
      `message.metadata["${A2A_METADATA.knock}"]: required (a signed KNOCK; see the card's extension), ` +
        `or "${A2A_METADATA.bridgeRequest}" for a cross-circle request`,
    );
  if (knock !== undefined) {
    const parsed = SignedKnockSchema.safeParse(knock);
    if (!parsed.success) malformed(describeIssues(`message.metadata["${A2A_METADATA.knock}"]`, parsed.error.issues));
    const s = parsed.data.statement;
    if (s.to !== target) malformed(`message.metadata["${A2A_METADATA.knock}"].statement.to: must be ${target}`);
    if (s.nonce !== messageDigest(message))
      malformed(
        `message.metadata["${A2A_METADATA.knock}"].statement.nonce: must be the digest of this message ` +
          '(base64url SHA-256 over its id and text)',
      );
    return { kind: 'knock', signed: parsed.data };
  }
  const parsed = SignedBridgeRequestSchema.safeParse(bridge);
  if (!parsed.success)
    malformed(describeIssues(`message.metadata["${A2A_METADATA.bridgeRequest}"]`, parsed.error.issues));
  const s = parsed.data.statement;
  if (s.to !== target) malformed(`message.metadata["${A2A_METADATA.bridgeRequest}"].statement.to: must be ${target}`);
  if (s.message !== messageText(message))
    malformed(`message.metadata["${A2A_METADATA.bridgeRequest}"].statement.message: must be the message's text`);
  return { kind: 'bridge', signed: parsed.data };
}
