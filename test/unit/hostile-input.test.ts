/**
 * Hostile input at the edges, without a server: nesting deep enough to overflow any recursive step is a bad-input
 * error naming the limit (never "Maximum call stack size exceeded"), and every error prints on one line.
 */
import { describe, expect, it } from 'vitest';
import { describeError } from '../../src/cli/io';
import { BadInputError } from '../../src/contracts/errors';
import { jsonDepthProblem, jsonTextDepthProblem, MAX_JSON_DEPTH } from '../../src/contracts/json-depth';
import { parseProposal, safeParseProposal } from '../../src/contracts/proposal';

/** `{"a":{"a":...}}` `levels` deep, built without recursion. */
function nested(levels: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let node = root;
  for (let i = 1; i < levels; i++) {
    const child: Record<string, unknown> = {};
    node.a = child;
    node = child;
  }
  return root;
}

const base = {
  proposal_id: 'deep-1',
  agent_id: '@eng',
  action_type: 'custom_thing',
  parameters: {},
  justification: 'testing depth',
};

describe('JSON nesting depth', () => {
  it('refuses a target nested 5,000 levels, naming the field and the limit (client and workflow check)', () => {
    const input = { ...base, target: nested(5000) };
    const message = 'proposal.target: nested more than 64 levels deep (the limit is MAX_JSON_DEPTH = 64)';
    expect(MAX_JSON_DEPTH).toBe(64);
    expect(() => parseProposal(input)).toThrow(BadInputError);
    expect(() => parseProposal(input)).toThrow(message);
    expect(safeParseProposal(input)).toEqual({ ok: false, refusal: { code: 'bad-input', reason: message } });
  });

  it('refuses a value 100,000 deep and a cyclic one without overflowing the stack', () => {
    expect(jsonDepthProblem(nested(100_000), 'x')).toMatch(/^x\.a: nested more than 64 levels deep/);
    const cyclic: Record<string, unknown> = { ...base };
    cyclic.target = cyclic;
    expect(() => parseProposal(cyclic)).toThrow(/proposal\.target: nested more than 64 levels/);
  });

  it('accepts exactly the limit, and counts arrays as levels too', () => {
    expect(jsonDepthProblem(nested(MAX_JSON_DEPTH), 'x')).toBeNull();
    expect(jsonDepthProblem(nested(MAX_JSON_DEPTH + 1), 'x')).not.toBeNull();
    expect(jsonDepthProblem([[[1]]], 'x', 3)).toBeNull();
    expect(jsonDepthProblem([[[[1]]]], 'x', 3)).toBe(
      'x[0]: nested more than 3 levels deep (the limit is MAX_JSON_DEPTH = 3)',
    );
    const ok = { ...base, target: nested(MAX_JSON_DEPTH - 1) };
    expect(safeParseProposal(ok).ok).toBe(true);
  });

  it('scans raw text 100,000 deep before JSON.parse; brackets inside strings do not count', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(jsonTextDepthProblem(deep, 'proposal')).toBe(
      'proposal: nested more than 64 levels deep (the limit is MAX_JSON_DEPTH = 64) at character 65',
    );
    expect(jsonTextDepthProblem(JSON.stringify({ s: '['.repeat(1000) + '\\"{{{{' }), 'p')).toBeNull();
    expect(jsonTextDepthProblem(JSON.stringify(nested(MAX_JSON_DEPTH)), 'p')).toBeNull();
    expect(jsonTextDepthProblem(JSON.stringify(nested(MAX_JSON_DEPTH + 1)), 'p')).not.toBeNull();
  });
});

describe('__proto__ keys', () => {
  it('are refused anywhere, with the field named, though zod strict objects would pass them over', () => {
    const text = JSON.stringify({ ...base, action_type: 'memory_write', parameters: { content: 'x' } }).replace(
      '"target":{',
      '"target":{"__proto__":{"store":"evil"},',
    );
    const input = JSON.parse(`${text.slice(0, -1)},"target":{"__proto__":{"x":1},"store":"memory"}}`) as unknown;
    expect(safeParseProposal(input)).toEqual({
      ok: false,
      refusal: { code: 'bad-input', reason: 'proposal.target: the key __proto__ is not allowed' },
    });
    const top = JSON.parse(`{"__proto__":{"admin":true},${JSON.stringify(base).slice(1)}`) as unknown;
    expect(() => parseProposal(top)).toThrow('proposal: the key __proto__ is not allowed');
  });
});

describe('one line per error', () => {
  it('flattens newlines of every kind of error, ours included', () => {
    let parseError: unknown;
    try {
      JSON.parse('// hi\n{}');
    } catch (err) {
      parseError = new BadInputError(`proposal: not valid JSON (${(err as Error).message})`);
    }
    for (const err of [
      parseError,
      new BadInputError('a\nb'),
      new Error('first\r\nsecond', { cause: new Error('third\nfourth') }),
      'plain\nstring',
      new BadInputError('para\u2028graph'),
    ]) {
      const line = describeError(err);
      expect(line).not.toMatch(/[\r\n\u2028\u2029]/);
      expect(line).toMatch(/^agent-judge: /);
    }
    expect(describeError(new BadInputError('a\nb'))).toBe('agent-judge: a b');
  });
});
