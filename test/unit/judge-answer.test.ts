/**
 * The answer schemas every backend derives from the one zod schema: the strict variant OpenAI's `json_schema` mode
 * requires (checked against its rules), answers in that form parsing back to the same verdict shape, and the user
 * task's alignment required when the prompt carried a task.
 */
import { describe, expect, it } from 'vitest';
import {
  MODEL_ANSWER_JSON_SCHEMA,
  MODEL_ANSWER_JSON_SCHEMA_WITH_TASK,
  MODEL_ANSWER_STRICT_JSON_SCHEMA,
  MODEL_ANSWER_STRICT_JSON_SCHEMA_WITH_TASK,
  parseModelAnswer,
  strictVariant,
} from '../../src/judge/answer';
import { z } from 'zod';

type Node = Record<string, unknown>;

/**
 * Every violation of OpenAI's strict-mode rules in a JSON Schema (Structured Outputs, "supported schemas"): the root
 * is an object, not a union; every object lists all its properties in `required` and sets
 * `additionalProperties: false`; no composition keyword strict mode refuses (allOf, not, if/then/else,
 * dependentRequired, dependentSchemas, patternProperties); no `$schema` key.
 */
function strictProblems(schema: Node): string[] {
  const problems: string[] = [];
  if (schema.type !== 'object') problems.push('root: must be an object');
  if ('$schema' in schema) problems.push('root: $schema');
  const walk = (node: unknown, path: string) => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      node.forEach((n, i) => walk(n, `${path}[${i}]`));
      return;
    }
    const n = node as Node;
    for (const bad of [
      'allOf',
      'not',
      'if',
      'then',
      'else',
      'dependentRequired',
      'dependentSchemas',
      'patternProperties',
    ])
      if (bad in n) problems.push(`${path}: ${bad} is not allowed`);
    const types = Array.isArray(n.type) ? n.type : [n.type];
    if (types.includes('object') || 'properties' in n) {
      const keys = Object.keys((n.properties as Node | undefined) ?? {});
      const required = (n.required as string[] | undefined) ?? [];
      for (const k of keys) if (!required.includes(k)) problems.push(`${path}.${k}: not in required`);
      if (n.additionalProperties !== false) problems.push(`${path}: additionalProperties is not false`);
    }
    for (const [k, v] of Object.entries(n)) if (k !== 'required' && k !== 'enum') walk(v, `${path}.${k}`);
  };
  walk(schema, 'root');
  return problems;
}

describe('the strict answer schema (OpenAI json_schema mode)', () => {
  it('is strict-compliant by the rules, with and without the user task', () => {
    expect(strictProblems(MODEL_ANSWER_STRICT_JSON_SCHEMA)).toEqual([]);
    expect(strictProblems(MODEL_ANSWER_STRICT_JSON_SCHEMA_WITH_TASK)).toEqual([]);
  });

  it('holds task_alignment to what the prompt allows: no_task only without a task, never with one', () => {
    const alignment = (schema: Node) => (schema.properties as Node).task_alignment;
    expect(alignment(MODEL_ANSWER_JSON_SCHEMA)).toMatchObject({ enum: ['no_task'] });
    expect(alignment(MODEL_ANSWER_JSON_SCHEMA_WITH_TASK)).toMatchObject({
      enum: ['serves_task', 'other_goal', 'unclear'],
    });
    expect(alignment(MODEL_ANSWER_STRICT_JSON_SCHEMA_WITH_TASK)).toEqual(alignment(MODEL_ANSWER_JSON_SCHEMA_WITH_TASK));
  });

  it('the ordinary schema is not (optional fields), which is why the variant exists', () => {
    expect(strictProblems(MODEL_ANSWER_JSON_SCHEMA)).toEqual(
      expect.arrayContaining(['root.constraints: not in required']),
    );
  });

  it('turns every optional field into a required union with null, keeping the bounds', () => {
    const c = (MODEL_ANSWER_STRICT_JSON_SCHEMA.properties as Node).constraints as Node;
    expect(c.anyOf).toEqual(expect.arrayContaining([{ type: 'null' }]));
    const object = (c.anyOf as Node[]).find((x) => x.type === 'object') as Node;
    expect(object.required).toEqual([
      'files_only',
      'max_lines',
      'no_existing_code_deletion',
      'require_human_review',
      'scope_limit',
    ]);
    const files = (object.properties as Node).files_only as Node;
    expect(files.anyOf).toEqual(
      expect.arrayContaining([{ type: 'null' }, expect.objectContaining({ type: 'array', maxItems: 16 })]),
    );
    expect((MODEL_ANSWER_STRICT_JSON_SCHEMA.properties as Node).reason).toMatchObject({ maxLength: 600 });
  });

  it('catches a strict violation in a nested schema it is given (the walker is not vacuous)', () => {
    const loose = z.toJSONSchema(z.object({ a: z.object({ b: z.string().optional() }) })) as Node;
    const { $schema: _s, ...rest } = loose;
    expect(strictProblems(rest)).toEqual(expect.arrayContaining([expect.stringMatching(/\.a\.b: not in required$/)]));
    const fixed = z.toJSONSchema(strictVariant(z.strictObject({ a: z.strictObject({ b: z.string().optional() }) })));
    const { $schema: _t, ...fixedRest } = fixed as Node;
    expect(strictProblems(fixedRest)).toEqual([]);
  });

  it('answers in the strict form parse back to the same verdict shape', () => {
    const strictAnswer = {
      verdict: 'APPROVE',
      confidence: 0.8,
      reason: 'fits issue #42',
      task_alignment: 'no_task',
      constraints: {
        files_only: ['src/schema/'],
        max_lines: null,
        no_existing_code_deletion: null,
        require_human_review: true,
        scope_limit: null,
      },
    };
    expect(parseModelAnswer(JSON.stringify(strictAnswer))).toEqual({
      ok: true,
      value: {
        verdict: 'APPROVE',
        confidence: 0.8,
        reason: 'fits issue #42',
        task_alignment: 'no_task',
        constraints: { files_only: ['src/schema/'], require_human_review: true },
      },
    });
    const noConstraints = { ...strictAnswer, constraints: null };
    expect(parseModelAnswer(JSON.stringify(noConstraints))).toEqual({
      ok: true,
      value: { verdict: 'APPROVE', confidence: 0.8, reason: 'fits issue #42', task_alignment: 'no_task' },
    });
  });

  it('null for a required field or an unknown key is still refused, naming the field', () => {
    const r1 = parseModelAnswer(JSON.stringify({ verdict: null, confidence: 0.5, reason: 'x' }));
    expect(r1.ok ? '' : r1.refusal.reason).toMatch(/answer\.verdict/);
    const r2 = parseModelAnswer(JSON.stringify({ verdict: 'APPROVE', confidence: 0.5, reason: 'x', escalation: null }));
    expect(r2.ok ? '' : r2.refusal.reason).toMatch(/escalation/);
  });
});

describe('task_alignment', () => {
  const answer = (extra: object = {}) =>
    JSON.stringify({ verdict: 'APPROVE', confidence: 0.9, reason: 'ok', ...extra });

  it('is optional when the prompt carried no user task', () => {
    expect(parseModelAnswer(answer()).ok).toBe(true);
  });

  it('is required, and must not be no_task, when the prompt carried one', () => {
    for (const raw of [answer(), answer({ task_alignment: 'no_task' })]) {
      const r = parseModelAnswer(raw, { requireTask: true });
      expect(r.ok ? '' : r.refusal.reason).toMatch(/answer\.task_alignment: a user task was given/);
    }
    expect(parseModelAnswer(answer({ task_alignment: 'other_goal' }), { requireTask: true }).ok).toBe(true);
  });

  it('refuses a value outside the enum', () => {
    const r = parseModelAnswer(answer({ task_alignment: 'probably' }));
    expect(r.ok ? '' : r.refusal.reason).toMatch(/answer\.task_alignment/);
  });

  it('a blank answer is an empty answer, not a JSON error', () => {
    expect(parseModelAnswer('  ')).toEqual({
      ok: false,
      refusal: { code: 'bad-input', reason: 'the answer is empty' },
    });
  });
});
