/**
 * Hostile input to the real CLI process, refused before any Temporal call: a parse error that quotes
 * multi-line input, and JSON nested far past MAX_JSON_DEPTH. Each exits 2 with exactly one stderr line,
 * whichever command reads the JSON.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));

function cli(args: string[], stdin: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // Nothing listens here: every case must be refused before the CLI connects.
    const env = { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1' };
    const child = execFile(process.execPath, [BIN, ...args], { env }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(stdin);
  });
}

const deep = '['.repeat(100_000) + ']'.repeat(100_000);
const deepTarget =
  '{"proposal_id":"d1","agent_id":"@a","action_type":"x_y","parameters":{},"justification":"j","target":' +
  '{"a":'.repeat(5000) +
  '{}' +
  '}'.repeat(5000) +
  '}';

describe('the CLI on hostile input', () => {
  it.each([
    [['propose', '-'], '// hi\n{}', /^agent-judge: proposal: not valid JSON \(.*\)$/],
    [['clarify', 'p-1', '-'], '{\n"a":\n', /^agent-judge: clarification: not valid JSON \(.*\)$/],
    [['propose', '-'], deep, /^agent-judge: proposal: nested more than 64 levels deep .*MAX_JSON_DEPTH/],
    [['propose', '-'], deepTarget, /^agent-judge: proposal: nested more than 64 levels deep .*MAX_JSON_DEPTH/],
    [['clarify', 'p-1', '-'], deep, /^agent-judge: clarification: nested more than 64 levels deep/],
  ])('%s exits 2 with one line', async (args, stdin, message) => {
    const run = await cli(args, stdin);
    expect(run.code, run.stderr).toBe(2);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(message);
    expect(run.stdout).toBe('');
  });
});
