import { createHash } from 'node:crypto';
import { mkdir, open, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalJson, type Proposal } from '../contracts/proposal';
import type { ExecutionResult } from '../contracts/status';

type Entry = { state: 'started'; started_at: string } | { state: 'done'; result: ExecutionResult };

/**
 * At-most-once execution on one executor host. Before acting, an attempt begins the action's entry
 * with an exclusive create; a retry finds the entry and never acts again: it returns the recorded
 * result, or `unknown` when the earlier attempt died mid-action (a person must look).
 */
export class ExecutionLedger {
  constructor(private readonly dir: string) {}

  /** The key binds the workflow to the exact action it approved. */
  static keyFor(workflowId: string, proposal: Proposal): string {
    const action = canonicalJson({
      workflowId,
      action_type: proposal.action_type,
      target: proposal.target,
      parameters: proposal.parameters,
    });
    return createHash('sha256').update(action).digest('hex');
  }

  private path(key: string): string {
    return join(this.dir, `${key}.json`);
  }

  /** Begins the key's entry (`started`); returns the earlier entry instead when there is one. */
  async begin(key: string, now: Date): Promise<{ begun: true } | { begun: false; entry: Entry }> {
    await mkdir(this.dir, { recursive: true });
    try {
      const handle = await open(this.path(key), 'wx');
      await handle.writeFile(JSON.stringify({ state: 'started', started_at: now.toISOString() } satisfies Entry));
      await handle.sync();
      await handle.close();
      return { begun: true };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const text = await readFile(this.path(key), 'utf8');
      try {
        return { begun: false, entry: JSON.parse(text) as Entry };
      } catch {
        // The earlier attempt died between creating the entry and writing it: it may have acted.
        return { begun: false, entry: { state: 'started', started_at: 'unknown' } };
      }
    }
  }

  async finish(key: string, result: ExecutionResult): Promise<void> {
    const tmp = `${this.path(key)}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify({ state: 'done', result } satisfies Entry));
    await rename(tmp, this.path(key));
  }
}
