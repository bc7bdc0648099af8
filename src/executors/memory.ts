import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
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
    const line = {
      at: new Date().toISOString(),
      agent_id: ctx.proposal.agent_id,
      proposal_id: ctx.proposal.proposal_id,
      workflow_id: ctx.workflowId,
      content: parameters.content,
    };
    await appendFile(file, `${JSON.stringify(line)}\n`, 'utf8');
    return { ok: true, output: { store: target.store, file, bytes: Buffer.byteLength(parameters.content) } };
  },
};
