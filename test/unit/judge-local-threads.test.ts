/** The local backend's thread default, chosen from the 1-vs-2-thread measurement in docs/bench.md. */
import { describe, expect, it } from 'vitest';
import { resolveJudge } from '../../src/judge/discover';
import { defaultLocalThreads } from '../../src/judge/local';
import { judgePolicy, tempBaseDir } from '../helpers/judge-fixtures';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

describe('the local model thread default', () => {
  it('is every core but one, at least one: a single thread on a 2-core machine', () => {
    expect(defaultLocalThreads(1)).toBe(1);
    expect(defaultLocalThreads(2)).toBe(1);
    expect(defaultLocalThreads(8)).toBe(7);
  });

  it('is what dev prints when the policy sets no thread count', async () => {
    const baseDir = tempBaseDir();
    // A file that is there but no model: the description is made before anything loads (and its load fails quietly).
    writeFileSync(join(baseDir, 'm.gguf'), '');
    const policy = await judgePolicy(baseDir, { local: { gguf: 'm.gguf', maxAnswerTokens: 64, contextSize: 1024 } });
    const judge = await resolveJudge(policy, {}, { baseDir });
    const n = defaultLocalThreads();
    expect(judge.description).toContain(`(node-llama-cpp, ${n} thread${n === 1 ? '' : 's'}, at most 64 answer tokens`);
    await (judge.deps.model as { llm?: { dispose(): Promise<void> } } | undefined)?.llm?.dispose();
  });
});
