/**
 * The model's answer: one zod schema, and the JSON Schemas every backend derives from it (Ollama's `format`, the
 * local grammar, OpenAI's strict `json_schema`, the schema written into a `json_object` prompt). The reply is always
 * checked against {@link ModelAnswerSchema}, whatever the server claims to enforce.
 */
import { z } from 'zod';
import { refused, type Checked } from '../contracts/refusal';
import { describeIssues } from '../contracts/zod-error';
import { TaskAlignmentSchema, VerdictKindSchema } from '../contracts/verdict';

export { TaskAlignmentSchema, type TaskAlignment } from '../contracts/verdict';

/** Longest `reason` a model may give: in the JSON Schema too, so a grammar ends the string. */
export const MAX_MODEL_REASON = 600;

/**
 * What the model must answer. `task_alignment` is optional here, for models that are not held to a schema and prompts
 * without a user task; when the prompt carried one, the judge requires it ({@link parseModelAnswer}'s `requireTask`).
 */
export const ModelAnswerSchema = z.strictObject({
  verdict: VerdictKindSchema,
  confidence: z.number().min(0).max(1),
  reason: z.string().min(1).max(MAX_MODEL_REASON),
  task_alignment: TaskAlignmentSchema.optional(),
  constraints: z
    .strictObject({
      files_only: z.array(z.string().min(1).max(4096)).max(1000).optional(),
      max_lines: z.int().nonnegative().optional(),
      no_existing_code_deletion: z.boolean().optional(),
      require_human_review: z.boolean().optional(),
      scope_limit: z.string().max(2048).optional(),
    })
    .optional(),
});
export type ModelAnswer = z.infer<typeof ModelAnswerSchema>;

/**
 * What the model is asked to produce: the answer with `task_alignment` required and held to what the prompt allows
 * (`no_task` only without a user task; one of `serves_task`, `other_goal`, `unclear` with one: the 270M test model
 * answered `no_task` beside a task until the schema stopped allowing it), and the suggested constraints bounded more
 * tightly than the answer check does, because the local backend and llama.cpp's server turn the schema into a
 * grammar: a small model that starts repeating itself (the 270M test model listed one file name until the token cap)
 * is then made to close the list and the answer instead of being cut mid-string. Everything it allows,
 * {@link ModelAnswerSchema} accepts.
 */
const requestedAnswer = (taskGiven: boolean) =>
  ModelAnswerSchema.extend({
    task_alignment: taskGiven ? TaskAlignmentSchema.exclude(['no_task']) : TaskAlignmentSchema.extract(['no_task']),
    constraints: ModelAnswerSchema.shape.constraints
      .unwrap()
      .extend({
        files_only: z.array(z.string().min(1).max(256)).max(16).optional(),
        scope_limit: z.string().max(512).optional(),
      })
      .optional(),
  });

/** A JSON Schema without the `$schema` key, which grammars and some providers refuse. */
function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
  return rest;
}

/** `format` for Ollama, the local backend's grammar and the schema a `json_object` prompt states: no user task. */
export const MODEL_ANSWER_JSON_SCHEMA = jsonSchemaOf(requestedAnswer(false));
/** The same when the prompt carries the user's task. */
export const MODEL_ANSWER_JSON_SCHEMA_WITH_TASK = jsonSchemaOf(requestedAnswer(true));

/**
 * The same schema in the form OpenAI's strict structured output requires: every property listed in `required`,
 * `additionalProperties: false` on every object, and each optional field a union with `null` (the model sends `null`
 * for "not given"). Made from the zod schema by {@link strictVariant}, so the two cannot drift apart;
 * {@link parseModelAnswer} reads `null` back as "not given", so a strict answer parses to the same verdict.
 */
export function strictVariant(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodOptional) return strictVariant(schema.unwrap() as z.ZodType).nullable();
  if (schema instanceof z.ZodObject) {
    const shape = Object.fromEntries(
      Object.entries(schema.shape as Record<string, z.ZodType>).map(([key, value]) => [key, strictVariant(value)]),
    );
    return z.strictObject(shape);
  }
  // Arrays keep their own bounds; an array of objects would need its items rewritten too (none here: the
  // compliance test walks the whole generated schema and would catch one).
  return schema;
}

/** `response_format.json_schema.schema` for OpenAI-compatible servers in `json_schema` mode (strict), no task. */
export const MODEL_ANSWER_STRICT_JSON_SCHEMA = jsonSchemaOf(strictVariant(requestedAnswer(false)));
/** The same when the prompt carries the user's task. */
export const MODEL_ANSWER_STRICT_JSON_SCHEMA_WITH_TASK = jsonSchemaOf(strictVariant(requestedAnswer(true)));

/** The schema a backend holds the answer to, for a prompt with or without the user's task. */
export function answerJsonSchema(options: { strict?: boolean; userTask: boolean }): Record<string, unknown> {
  if (options.strict)
    return options.userTask ? MODEL_ANSWER_STRICT_JSON_SCHEMA_WITH_TASK : MODEL_ANSWER_STRICT_JSON_SCHEMA;
  return options.userTask ? MODEL_ANSWER_JSON_SCHEMA_WITH_TASK : MODEL_ANSWER_JSON_SCHEMA;
}

/** The model's answer, or why it is refused (the judge asks once more, then records the reason). */
export type ParsedAnswer = Checked<ModelAnswer>;

const ANSWER_KEYS = new Set(Object.keys(ModelAnswerSchema.shape));
const CONSTRAINT_KEYS = new Set(Object.keys(ModelAnswerSchema.shape.constraints.unwrap().shape));

/** Drops known keys whose value is `null` (strict mode's "not given"); unknown keys stay, and are refused. */
function withoutNulls(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const drop = (obj: Record<string, unknown>, known: Set<string>) =>
    Object.fromEntries(Object.entries(obj).filter(([k, v]) => !(v === null && known.has(k))));
  const top = drop(value as Record<string, unknown>, ANSWER_KEYS);
  const c = top.constraints;
  if (c !== null && typeof c === 'object' && !Array.isArray(c)) {
    top.constraints = drop(c as Record<string, unknown>, CONSTRAINT_KEYS);
  }
  return top;
}

export interface ParseAnswerOptions {
  /** The prompt carried a user task: the answer must say whether the action serves it. */
  requireTask?: boolean;
}

/**
 * Reads the model's reply: tolerates a `<think>` preamble and a Markdown code fence (both common when the schema is
 * not enforced) and `null` for a field not given (strict mode), then requires exactly {@link ModelAnswerSchema}.
 */
export function parseModelAnswer(raw: string, options: ParseAnswerOptions = {}): ParsedAnswer {
  let text = raw.trim().replace(/^<think>[\s\S]*?<\/think>\s*/u, '');
  const fence = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/u.exec(text);
  if (fence) text = (fence[1] as string).trim();
  if (text === '') return refused('bad-input', 'the answer is empty');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return refused('bad-input', `the answer is not JSON (${(err as Error).message})`);
  }
  const parsed = ModelAnswerSchema.safeParse(withoutNulls(value));
  if (!parsed.success) return refused('bad-input', describeIssues('answer', parsed.error.issues));
  const alignment = parsed.data.task_alignment;
  if (options.requireTask && (alignment === undefined || alignment === 'no_task')) {
    return refused(
      'bad-input',
      'answer.task_alignment: a user task was given, so say whether the action serves it ' +
        '(serves_task, other_goal or unclear)',
    );
  }
  return { ok: true, value: parsed.data };
}
