/**
 * For A2A callers: a message to a top-level agent behind the front, signed with the caller's key
 * file. Signing happens here, in the caller's process; the key never leaves it.
 */
import { randomUUID } from 'node:crypto';
import { Role, type Message } from '@a2a-js/sdk';
import { ServiceParameters, withA2AExtensions, type RequestOptions } from '@a2a-js/sdk/client';
import type { KeyFile } from '../contracts/identity';
import { newNonce } from '../identity/keys';
import { signStatement } from '../circles/sign';
import { messageDigest } from './message';
import { A2A_METADATA, KNOCK_EXTENSION_URI } from './names';

function textMessage(text: string, messageId: string): Message {
  return {
    messageId,
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A direct message from `key`'s agent to top-level agent `to`, carrying a KNOCK bound to this text. */
export function knockMessage(key: KeyFile, to: string, text: string, opts: { time?: number } = {}): Message {
  const message = textMessage(text, randomUUID());
  const statement = { from: key.amid, to, time: opts.time ?? Date.now(), nonce: messageDigest(message) };
  message.metadata = {
    [A2A_METADATA.knock]: { statement, signature: signStatement('knock', statement, key.private_key) },
  };
  return message;
}

/**
 * A sub-agent's `request_cross_circle` to top-level agent `to` of another circle: it waits for
 * both parents (the bridge) and is read by the target with `circles bridge list`.
 */
export function bridgeMessage(key: KeyFile, to: string, text: string): Message {
  const message = textMessage(text, randomUUID());
  const statement = { from: key.amid, to, message: text, time: Date.now(), nonce: newNonce() };
  message.metadata = {
    [A2A_METADATA.bridgeRequest]: { statement, signature: signStatement('bridge-request', statement, key.private_key) },
  };
  return message;
}

/**
 * Request options that declare the KNOCK extension (the `A2A-Extensions` header). The cards mark
 * it required, so the SDK's server refuses a message sent without them.
 */
export function knockRequestOptions(options: RequestOptions = {}): RequestOptions {
  return {
    ...options,
    serviceParameters: ServiceParameters.createFrom(options.serviceParameters, withA2AExtensions(KNOCK_EXTENSION_URI)),
  };
}
