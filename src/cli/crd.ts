import { stringify as toYaml } from 'yaml';
import { z } from 'zod';
import { CompliancePolicySchema } from '../contracts/policy';

/** Where the generated CRD is committed; the unit test compares it with {@link crdYaml}. */
export const CRD_PATH = 'deploy/helm/agent-judge/crds/compliancepolicy.yaml';
/** What regenerates {@link CRD_PATH}. */
export const CRD_COMMAND = `node bin/agent-judge.mjs schema crd > ${CRD_PATH}`;

type Node = Record<string, unknown>;

/** JSON Schema keywords a CRD node keeps as they are (OpenAPI v3.0's subset Kubernetes reads). */
const KEPT = [
  'description',
  'type',
  'format',
  'default',
  'enum',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'uniqueItems',
  'multipleOf',
  'required',
] as const;

/** The duration form of `DurationSchema`: milliseconds or a string such as `24h`. */
function isIntOrString(branches: Node[]): boolean {
  const types = branches.map((b) => b.type).sort();
  return types.length === 2 && types[0] === 'integer' && types[1] === 'string';
}

/** A CEL string literal for a regular expression (raw, so backslashes stay as RE2 reads them). */
function celRegex(pattern: string): string {
  if (pattern.includes("'")) throw new Error(`crd: pattern ${pattern} contains a quote`);
  return `r'${pattern}'`;
}

/** The CEL condition one map key `k` must meet, from a `propertyNames` schema; null when any string is fine. */
function keyCondition(names: Node): string | null {
  if (Array.isArray(names.anyOf)) {
    const parts = (names.anyOf as Node[]).map(keyCondition);
    return parts.includes(null) ? null : parts.map((p) => `(${p})`).join(' || ');
  }
  const conditions: string[] = [];
  if (names.const !== undefined) conditions.push(`k == ${JSON.stringify(names.const)}`);
  if (Array.isArray(names.enum)) conditions.push(`k in ${JSON.stringify(names.enum)}`);
  if (typeof names.pattern === 'string') conditions.push(`k.matches(${celRegex(names.pattern)})`);
  if (typeof names.maxLength === 'number') conditions.push(`size(k) <= ${names.maxLength}`);
  return conditions.length > 0 ? conditions.join(' && ') : null;
}

/**
 * One JSON Schema node (zod's output, draft 2020-12) as a structural OpenAPI v3 node: `$ref` inlined, `const` as a
 * one-value `enum`, a numeric `exclusiveMinimum` as OpenAPI's boolean form, `additionalProperties: false` dropped
 * (Kubernetes prunes unknown fields instead), `propertyNames` as a CEL rule, `integer | string` durations as
 * `x-kubernetes-int-or-string`, an unconstrained value as `x-kubernetes-preserve-unknown-fields`. Anything else
 * throws, so a schema change that Kubernetes could not represent fails the CRD test instead of shipping.
 */
function structural(node: Node, defs: Record<string, Node>, at: string, seen: readonly string[] = []): Node {
  if (typeof node.$ref === 'string') {
    const name = node.$ref.replace(/^#\/(\$defs|definitions)\//, '');
    const target = defs[name];
    if (!target) throw new Error(`crd: ${at}: cannot resolve ${node.$ref}`);
    if (seen.includes(name)) throw new Error(`crd: ${at}: ${node.$ref} is recursive; a CRD cannot say that`);
    const { $ref: _ref, ...rest } = node;
    return structural({ ...target, ...rest }, defs, at, [...seen, name]);
  }
  const out: Node = {};
  for (const key of KEPT) if (node[key] !== undefined) out[key] = node[key];
  // zod writes `.nullable()` as `type: [T, 'null']`; OpenAPI v3.0 has one type and `nullable`.
  if (Array.isArray(node.type)) {
    const types = (node.type as string[]).filter((t) => t !== 'null');
    if (types.length !== 1) throw new Error(`crd: ${at}: a value of types ${types.join('|')} is not structural`);
    out.type = types[0];
    if (types.length < node.type.length) out.nullable = true;
  }
  if (node.const !== undefined) out.enum = [node.const];
  // OpenAPI v3.0 (what Kubernetes reads) has the boolean form; for an integer, `> n` is `>= n + 1`.
  for (const [exclusive, bound, step] of [
    ['exclusiveMinimum', 'minimum', 1],
    ['exclusiveMaximum', 'maximum', -1],
  ] as const) {
    const n = node[exclusive];
    if (typeof n !== 'number') continue;
    if (node.type === 'integer') out[bound] = n + step;
    else Object.assign(out, { [bound]: n, [exclusive]: true });
  }

  if (Array.isArray(node.anyOf)) {
    const branches = node.anyOf as Node[];
    const nonNull = branches.filter((b) => b.type !== 'null');
    if (nonNull.length === 1 && nonNull[0]) {
      return { ...structural({ ...nonNull[0], ...out }, defs, at, seen), nullable: true };
    }
    if (!isIntOrString(branches)) throw new Error(`crd: ${at}: anyOf other than integer|string is not structural`);
    // The two patterns Kubernetes allows beside int-or-string; each branch's own limits apply to its type only.
    const limits = branches.map((b) => {
      const { type: _type, ...rest } = structural(b, defs, at, seen);
      return rest;
    });
    const merged: Node = {};
    for (const limit of limits) {
      for (const [k, v] of Object.entries(limit)) {
        if (k in merged) throw new Error(`crd: ${at}: both branches of integer|string set ${k}`);
        merged[k] = v;
      }
    }
    return {
      ...out,
      'x-kubernetes-int-or-string': true,
      allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, ...(Object.keys(merged).length ? [merged] : [])],
    };
  }
  for (const key of ['oneOf', 'allOf', 'not', 'prefixItems', 'patternProperties', 'if'] as const) {
    if (node[key] !== undefined) throw new Error(`crd: ${at}: ${key} is not supported in a CRD schema`);
  }

  if (out.type === undefined) return { ...out, 'x-kubernetes-preserve-unknown-fields': true };
  if (out.type === 'array' && node.items && typeof node.items === 'object') {
    out.items = structural(node.items as Node, defs, `${at}[]`, seen);
  }
  if (out.type === 'object') {
    if (node.properties && typeof node.properties === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(node.properties as Record<string, Node>).map(([k, v]) => [
          k,
          structural(v, defs, `${at}.${k}`, seen),
        ]),
      );
    }
    // `false` (zod's strict objects): Kubernetes prunes what the properties do not name. Absent, `true` or `{}`: open.
    const extra = node.additionalProperties;
    if (extra && typeof extra === 'object' && Object.keys(extra).length > 0) {
      if (out.properties) throw new Error(`crd: ${at}: properties and additionalProperties together`);
      out.additionalProperties = structural(extra as Node, defs, `${at}.*`, seen);
    } else if (extra !== false) {
      out['x-kubernetes-preserve-unknown-fields'] = true;
    }
    const keys = node.propertyNames ? keyCondition(node.propertyNames as Node) : null;
    if (keys) {
      out['x-kubernetes-validations'] = [
        { rule: `self.all(k, ${keys})`, message: `keys must match ${JSON.stringify(node.propertyNames)}` },
      ];
    }
  }
  return out;
}

/** A JSON Schema document (its `$defs` inlined) as a Kubernetes structural schema; throws on what has no equivalent. */
export function structuralSchema(json: Node): Node {
  const defs = {
    ...((json.definitions as Record<string, Node>) ?? {}),
    ...((json.$defs as Record<string, Node>) ?? {}),
  };
  return structural(json, defs, 'schema');
}

/** The CompliancePolicy's openAPIV3Schema: the zod schema's input side, made structural. */
export function policyOpenApiSchema(): Node {
  const json = z.toJSONSchema(CompliancePolicySchema, { io: 'input', unrepresentable: 'any' }) as Node;
  const schema = structuralSchema(json);
  const properties = schema.properties as Record<string, Node>;
  // The API server owns these three: metadata may only constrain name and generateName, and apiVersion/kind are
  // the resource's own.
  properties.apiVersion = { type: 'string' };
  properties.kind = { type: 'string' };
  properties.metadata = { type: 'object' };
  schema.required = ['spec'];
  return schema;
}

/** The CompliancePolicy CustomResourceDefinition (apiextensions.k8s.io/v1), generated from the zod schema. */
export function policyCrd(): Node {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: 'compliancepolicies.agent-judge.dev',
      labels: { 'app.kubernetes.io/name': 'agent-judge' },
    },
    spec: {
      group: 'agent-judge.dev',
      scope: 'Namespaced',
      names: {
        kind: 'CompliancePolicy',
        listKind: 'CompliancePolicyList',
        plural: 'compliancepolicies',
        singular: 'compliancepolicy',
        shortNames: ['cpol'],
      },
      versions: [{ name: 'v1alpha1', served: true, storage: true, schema: { openAPIV3Schema: policyOpenApiSchema() } }],
    },
  };
}

/** {@link policyCrd} as the YAML file `agent-judge schema crd` prints. */
export function crdYaml(): string {
  return (
    `# Generated by \`agent-judge schema crd\` from the zod schema (src/contracts/policy.ts). Do not edit:\n` +
    `# ${CRD_COMMAND}\n` +
    toYaml(policyCrd(), { lineWidth: 0 })
  );
}
