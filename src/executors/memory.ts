import { appendFile, mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { LimitExceededError } from '../contracts/errors';
import { memoryStoreFinding } from '../contracts/memory-stores';
import { proposalFor, type Executor } from './types';

/** memory_write: appends one JSON line to the agent memory store `<memory.dir>/<store>.jsonl`. */
export const memoryExecutor: Executor = {
  name: 'memory',
  idempotent: true,
  /** Each line names its workflow: the earlier attempt's line, when there is one, is found exactly. */
  async confirm(ctx) {
    const { target, parameters } = proposalFor(ctx, 'memory_write');
    const file = join(ctx.policy.spec.memory.dir, `${target.store}.jsonl`);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    for (const raw of text.split('\n')) {
      if (!raw.includes(ctx.workflowId)) continue;
      try {
        const line = JSON.parse(raw) as { workflow_id?: unknown; content?: unknown };
        if (line.workflow_id === ctx.workflowId && line.content === parameters.content) {
          return {
            ok: true,
            output: { store: target.store, file, bytes: Buffer.byteLength(parameters.content), confirmed: true },
          };
        }
      } catch {
        /* a line torn by the crash: not the earlier attempt's complete write */
      }
    }
    return null;
  },
  async run(ctx) {
    const { target, parameters } = proposalFor(ctx, 'memory_write');
    const dir = ctx.policy.spec.memory.dir;
    await mkdir(dir, { recursive: true });
    const file = join(dir, `${target.store}.jsonl`);
    // Checked again here, whatever the verdict said: a store that is not the agent's is never written.
    const foreign = memoryStoreFinding(ctx.proposal, ctx.policy);
    if (foreign) throw new LimitExceededError('memory_store', null, `${foreign.rule}: ${foreign.reason}`);
    const line = {
      at: new Date().toISOString(),
      agent_id: ctx.proposal.agent_id,
      proposal_id: ctx.proposal.proposal_id,
      workflow_id: ctx.workflowId,
      content: parameters.content,
    };
    const text = `${JSON.stringify(line)}\n`;
    const max = ctx.policy.spec.memory.maxStoreBytes;
    const size = await stat(file).then(
      (s) => s.size,
      () => 0,
    );
    if (size + Buffer.byteLength(text) > max) {
      throw new LimitExceededError(
        'memory_store_bytes',
        null,
        `limit memory_store_bytes: store ${target.store} holds ${size} bytes and this write would pass ` +
          `spec.memory.maxStoreBytes (${max}); it resets only when the operator clears or raises it`,
      );
    }
    await appendFile(file, text, 'utf8');
    return { ok: true, output: { store: target.store, file, bytes: Buffer.byteLength(parameters.content) } };
  },
};
