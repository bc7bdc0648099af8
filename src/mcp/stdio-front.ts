/**
 * The stdio front's one addition to the SDK's stdio server transport: JSON-RPC batches. The SDK's framing takes a
 * line holding an array for a parse error (the agent hears nothing, nothing is audited); here such a line is taken
 * out of the stream and handed to the proxy, which refuses it with an error per request and an audit line
 * (src/mcp/admission.ts). Every other line reaches the transport byte for byte.
 */
import { Transform, type Readable } from 'node:stream';

/** A partial line longer than this is passed on as it is: the SDK's own buffer bound then refuses it. */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;

/** `input` without its batch lines, each given to `onBatch` parsed. */
export function withoutBatches(input: Readable, onBatch: (batch: unknown[]) => void): Readable {
  let pending = Buffer.alloc(0);
  const filter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      pending = Buffer.concat([pending, chunk]);
      let newline: number;
      while ((newline = pending.indexOf(0x0a)) !== -1) {
        const line = pending.subarray(0, newline + 1);
        pending = pending.subarray(newline + 1);
        const batch = asBatch(line);
        if (batch) onBatch(batch);
        else this.push(line);
      }
      if (pending.length > MAX_PENDING_BYTES) {
        this.push(pending);
        pending = Buffer.alloc(0);
      }
      done();
    },
    flush(done) {
      if (pending.length > 0) this.push(pending);
      done();
    },
  });
  return input.pipe(filter);
}

function asBatch(line: Buffer): unknown[] | null {
  const text = line.toString('utf8').trim();
  if (!text.startsWith('[')) return null;
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value : null;
  } catch {
    return null; // the transport reports the parse error
  }
}
