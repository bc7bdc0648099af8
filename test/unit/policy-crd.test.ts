/**
 * The CompliancePolicy CRD (deploy/helm/agent-judge/crds/compliancepolicy.yaml): generated from the zod schema, a
 * structural schema as the Kubernetes API server demands, and as strict as the zod schema on what matters: the
 * default policy passes, bad ones are refused. No API server runs here: the schema is checked with ajv, and the CEL
 * rules on map keys with a small translation of the few forms src/cli/crd.ts writes.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { CRD_COMMAND, CRD_PATH, crdYaml, structuralSchema } from '../../src/cli/crd';
import { buildProgram } from '../../src/cli/main';
import { DEFAULT_POLICY_PATH, loadPolicy } from '../../src/policy/load';

type Node = Record<string, unknown>;

const root = fileURLToPath(new URL('../../', import.meta.url));
const crd = parseYaml(readFileSync(join(root, CRD_PATH), 'utf8')) as {
  spec: {
    group: string;
    scope: string;
    names: { kind: string };
    versions: Array<{ name: string; served: boolean; storage: boolean; schema: { openAPIV3Schema: Node } }>;
  };
};
const version = crd.spec.versions[0];
const schema = version?.schema.openAPIV3Schema ?? {};

/** Every reason the API server would refuse `node` as a structural schema (apiextensions.k8s.io/v1 rules). */
function structuralProblems(node: Node, at: string): string[] {
  const problems: string[] = [];
  for (const banned of ['$ref', '$schema', '$defs', 'definitions', 'const', 'propertyNames', 'oneOf', 'not'])
    if (banned in node) problems.push(`${at}: ${banned}`);
  if (node.additionalProperties === false) problems.push(`${at}: additionalProperties: false`);
  if (node.properties && node.additionalProperties) problems.push(`${at}: properties with additionalProperties`);
  for (const k of ['exclusiveMinimum', 'exclusiveMaximum'])
    if (k in node && typeof node[k] !== 'boolean') problems.push(`${at}: ${k} must be a boolean in OpenAPI v3.0`);
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  const open = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (typeof node.type !== 'string' && !intOrString && !open) problems.push(`${at}: no type`);
  if ('anyOf' in node) problems.push(`${at}: anyOf outside the int-or-string pattern`);
  if ('allOf' in node) {
    const [first, ...rest] = node.allOf as Node[];
    const pattern = JSON.stringify({ anyOf: [{ type: 'integer' }, { type: 'string' }] });
    if (!intOrString || JSON.stringify(first) !== pattern) problems.push(`${at}: allOf other than int-or-string's`);
    for (const v of rest)
      for (const k of ['type', 'default', 'description', 'properties', 'items', 'additionalProperties'])
        if (k in v) problems.push(`${at}: value validation with ${k}`);
  }
  if (node.items) problems.push(...structuralProblems(node.items as Node, `${at}[]`));
  if (node.additionalProperties && typeof node.additionalProperties === 'object')
    problems.push(...structuralProblems(node.additionalProperties as Node, `${at}.*`));
  for (const [k, v] of Object.entries((node.properties as Record<string, Node> | undefined) ?? {}))
    problems.push(...structuralProblems(v, `${at}.${k}`));
  return problems;
}

/**
 * A CEL rule of the forms the generator writes (`self.all(k, ...)` with `matches`, `in`, `==`, `size`, `&&`, `||`)
 * as a predicate over a map's keys; anything else throws, so a new form cannot pass unchecked.
 */
function celKeyRule(rule: string): (keys: string[]) => boolean {
  const body = /^self\.all\(k, (.*)\)$/.exec(rule)?.[1];
  if (!body) throw new Error(`unsupported CEL rule ${rule}`);
  const condition = (expr: string): ((k: string) => boolean) => {
    if (expr.includes(' || ')) {
      const any = expr.split(' || ').map(condition);
      return (k) => any.some((c) => c(k));
    }
    if (expr.includes(' && ')) {
      const all = expr.split(' && ').map(condition);
      return (k) => all.every((c) => c(k));
    }
    const e = expr.startsWith('(') && expr.endsWith(')') ? expr.slice(1, -1) : expr;
    const matches = /^k\.matches\(r'([^']*)'\)$/.exec(e)?.[1];
    if (matches !== undefined) return (k) => new RegExp(matches).test(k);
    const among = /^k in (\[.*\])$/.exec(e)?.[1];
    if (among !== undefined) return (k) => (JSON.parse(among) as string[]).includes(k);
    const equal = /^k == (".*")$/.exec(e)?.[1];
    if (equal !== undefined) return (k) => k === JSON.parse(equal);
    const size = /^size\(k\) <= (\d+)$/.exec(e)?.[1];
    if (size !== undefined) return (k) => k.length <= Number(size);
    throw new Error(`unsupported CEL in ${rule}: ${e}`);
  };
  const test = condition(body);
  return (keys) => keys.every(test);
}

/** The CRD schema as ajv (draft-07) reads it: OpenAPI's boolean exclusive bounds as numbers. */
function asDraft7(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(asDraft7);
  if (!node || typeof node !== 'object') return node;
  const out: Node = {};
  for (const [k, v] of Object.entries(node as Node)) {
    if (k === 'default' || k === 'enum') out[k] = v;
    else if (k === 'properties')
      out[k] = Object.fromEntries(Object.entries(v as Node).map(([p, s]) => [p, asDraft7(s)]));
    else out[k] = asDraft7(v);
  }
  for (const [exclusive, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (out[exclusive] === true) {
      out[exclusive] = out[bound];
      delete out[bound];
    }
  }
  return out;
}

const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat('uri', (s: string) => URL.canParse(s));
ajv.addFormat('date-time', (s: string) => /^\d{4}-\d\d-\d\dT/.test(s) && !Number.isNaN(Date.parse(s)));
ajv.addKeyword({
  keyword: 'x-kubernetes-validations',
  validate: (rules: Array<{ rule: string }>, data: unknown) =>
    data === null || typeof data !== 'object' || rules.every(({ rule }) => celKeyRule(rule)(Object.keys(data))),
});
const validate = ajv.compile(asDraft7(schema) as object);

/** What the API server would say about `doc`, one `path: message` line per error; empty when accepted. */
function refusals(doc: unknown): string[] {
  return validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message}`);
}

let dir: string;
let defaults: Record<string, unknown> & { spec: Record<string, Record<string, unknown> & object> };
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-judge-crd-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(() => {
  defaults = parseYaml(readFileSync(DEFAULT_POLICY_PATH, 'utf8')) as typeof defaults;
});

/** The default policy document with one change made by `edit`. */
function defaultWith(edit: (doc: typeof defaults) => void): unknown {
  const doc = structuredClone(defaults);
  edit(doc);
  return doc;
}

describe('the CompliancePolicy CRD', () => {
  it('is the committed file, generated from the zod schema', () => {
    const committed = readFileSync(join(root, CRD_PATH), 'utf8');
    expect(committed === crdYaml(), `${CRD_PATH} is stale: regenerate it with\n  ${CRD_COMMAND}`).toBe(true);
  });

  it('is what `agent-judge schema crd` prints', async () => {
    const argv = ['node', 'agent-judge', 'schema', 'crd'];
    const program = await buildProgram(argv);
    const printed: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      printed.push(String(chunk));
      return true;
    });
    try {
      await program.parseAsync(argv);
    } finally {
      write.mockRestore();
    }
    expect(printed.join('')).toBe(crdYaml());
  });

  it('names the resource agent-judge.dev/v1alpha1 CompliancePolicy, namespaced, served and stored', () => {
    expect(crd.spec.group).toBe('agent-judge.dev');
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names.kind).toBe('CompliancePolicy');
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: true });
  });

  it('is a structural schema', () => {
    expect(structuralProblems(schema, 'openAPIV3Schema')).toEqual([]);
    // The check itself catches what zod emits before conversion.
    expect(structuralProblems({ type: 'object', additionalProperties: false, propertyNames: {} }, 'x')).toEqual([
      'x: propertyNames',
      'x: additionalProperties: false',
    ]);
  });

  it('has defaults the schema itself accepts (the API server refuses a CRD whose defaults do not validate)', () => {
    const problems: string[] = [];
    let checked = 0;
    const walk = (node: Node, at: string) => {
      if (node.default !== undefined) {
        checked += 1;
        const check = ajv.compile(asDraft7({ ...node, default: undefined }) as object);
        if (!check(structuredClone(node.default))) problems.push(`${at}: ${ajv.errorsText(check.errors)}`);
      }
      if (node.items) walk(node.items as Node, `${at}[]`);
      if (node.additionalProperties && typeof node.additionalProperties === 'object')
        walk(node.additionalProperties as Node, `${at}.*`);
      for (const [k, v] of Object.entries((node.properties as Record<string, Node> | undefined) ?? {}))
        walk(v, `${at}.${k}`);
    };
    walk(schema, 'openAPIV3Schema');
    expect(checked).toBeGreaterThan(50);
    expect(problems).toEqual([]);
  });

  it('keeps the validation: patterns, bounds, enums and required fields', () => {
    const spec = (schema.properties as Record<string, Node>).spec as Node & { properties: Record<string, Node> };
    expect(spec.required).toEqual(expect.arrayContaining(['riskMatrix', 'thresholds', 'escalation']));
    const text = JSON.stringify(spec);
    expect(text).toContain('"enum":["no-judge","lightweight-approval","full-judge-review","human-only"]');
    expect(text).toContain('"pattern":"^\\\\d+(\\\\.\\\\d+)?\\\\s*(ms|s|m|h|d)$"');
  });

  it('accepts the default policy, as written and as completed', async () => {
    expect(refusals(defaults)).toEqual([]);
    const completed = await loadPolicy({ path: DEFAULT_POLICY_PATH, baseDir: dir, env: {} });
    expect(refusals(JSON.parse(JSON.stringify(completed)))).toEqual([]);
  });

  it.each([
    [
      'an unknown tier',
      (d: typeof defaults) => ((d.spec.riskMatrix as unknown as Node[])[0]!.tier = 'maybe'),
      '/spec/riskMatrix/0/tier: must be equal to one of the allowed values',
    ],
    [
      'a negative threshold',
      (d: typeof defaults) => (d.spec.thresholds!.clarify = -0.1),
      '/spec/thresholds/clarify: must be >= 0',
    ],
    [
      'a malformed duration',
      (d: typeof defaults) => (d.spec.clarify!.timeout = '1 fortnight'),
      '/spec/clarify/timeout: must match pattern "^\\d+(\\.\\d+)?\\s*(ms|s|m|h|d)$"',
    ],
    [
      'a missing required field',
      (d: typeof defaults) => delete (d.spec as Record<string, unknown>).riskMatrix,
      "/spec: must have required property 'riskMatrix'",
    ],
    [
      'a quorum for a tier that does not exist (a CEL rule on the keys)',
      (d: typeof defaults) => ((d.spec.escalation!.quorum as Node).nobody = 1),
      '/spec/escalation/quorum: must pass "x-kubernetes-validations" keyword validation',
    ],
  ])('refuses %s', (_what, edit, refusal) => {
    expect(refusals(defaultWith(edit))).toContain(refusal);
  });
});

describe('the JSON Schema to structural schema conversion', () => {
  const convert = (schema: z.ZodType) => structuralSchema(z.toJSONSchema(schema, { io: 'input' }));

  it('inlines references, and refuses recursive ones', () => {
    const Name = z.string().min(1).meta({ id: 'Name' });
    const converted = convert(z.strictObject({ a: Name, b: Name }));
    expect(JSON.stringify(converted)).not.toContain('$ref');
    expect(converted.properties).toEqual({ a: { type: 'string', minLength: 1 }, b: { type: 'string', minLength: 1 } });
    const Tree: z.ZodType = z.lazy(() => z.strictObject({ children: z.array(Tree) }));
    expect(() => convert(z.strictObject({ tree: Tree }))).toThrow(/recursive/);
  });

  it('keeps nullable values and refuses unions Kubernetes cannot check', () => {
    expect(convert(z.strictObject({ a: z.string().nullable() })).properties).toEqual({
      a: { type: 'string', nullable: true },
    });
    expect(() => convert(z.strictObject({ a: z.union([z.string(), z.boolean()]) }))).toThrow(
      'crd: schema.a: a value of types string|boolean is not structural',
    );
    const either = z.union([z.strictObject({ b: z.string() }), z.strictObject({ c: z.number() })]);
    expect(() => convert(z.strictObject({ a: either }))).toThrow(
      'crd: schema.a: anyOf other than integer|string is not structural',
    );
  });

  it('closes strict objects and opens records of anything', () => {
    expect(convert(z.strictObject({}))).toEqual({ type: 'object', properties: {} });
    expect(convert(z.record(z.string(), z.unknown()))).toEqual({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
  });
});
