import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CompliancePolicySchema, type CompliancePolicy } from '../contracts/policy';
import { describeIssues } from '../contracts/zod-error';
import { PolicyError } from '../contracts/errors';
import { tierFor } from './classify';
import { isInside } from '../guards/paths';
import { PACKAGE_ROOT } from '../package-root';
import { defaultPolicyFile, layerPolicy, parsePolicyText, userLineOf, type PolicyLayers } from './layers';
import { policyDocumentDigest, type OwnPolicy } from './agreement';
import { processEnv } from '../config/process-env';

/** The policy shipped with the project: seed 000 §2's matrix with deny-by-default settings. */
export const DEFAULT_POLICY_PATH = join(PACKAGE_ROOT, 'policies', 'default.yaml');

export interface LoadPolicyOptions {
  /** Policy file; else `AGENT_JUDGE_POLICY`, else the default policy. */
  path?: string;
  /** Relative paths in the policy resolve against this directory (default: process.cwd()). */
  baseDir?: string;
  env?: NodeJS.ProcessEnv;
}

/** A loaded policy and how it was made: the file laid over the default (src/policy/layers.ts). */
export interface LoadedPolicy {
  policy: CompliancePolicy;
  layers: PolicyLayers;
  /** The file named (absolute), or the default policy's path. */
  path: string;
  /**
   * The policy document (the file laid over the default, before completion) and its digest: what processes compare
   * with the workflow workers' (src/policy/agreement.ts).
   */
  own: OwnPolicy;
}

/**
 * Reads, validates and completes a CompliancePolicy: the file is laid over policies/default.yaml (it says only
 * what differs), relative paths become absolute, and `AGENT_JUDGE_APPROVERS` adds approvers. A bad file throws
 * {@link PolicyError} naming the file (and line), the field and the rule.
 */
export async function loadPolicy(options: LoadPolicyOptions = {}): Promise<CompliancePolicy> {
  return (await loadPolicyLayers(options)).policy;
}

/** {@link loadPolicy}, also returning the layers (`agent-judge policy show|check` print where each value is from). */
export async function loadPolicyLayers(options: LoadPolicyOptions = {}): Promise<LoadedPolicy> {
  const env = options.env ?? processEnv();
  const path = resolve(options.path ?? env.AGENT_JUDGE_POLICY ?? DEFAULT_POLICY_PATH);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new PolicyError(`policy ${path}: cannot read the file (${(err as Error).message})`);
  }
  let user;
  try {
    user = parsePolicyText(path, text);
  } catch (err) {
    throw new PolicyError(`policy ${path}: not valid YAML (${(err as Error).message.split('\n')[0]})`);
  }
  const layers = layerPolicy(defaultPolicyFile(DEFAULT_POLICY_PATH), user);
  const policy = completePolicy(layers.merged, {
    source: path,
    baseDir: options.baseDir ?? process.cwd(),
    env,
    layers,
  });
  return {
    policy,
    layers,
    path,
    own: {
      source: path,
      document: layers.merged,
      document_sha256: policyDocumentDigest(layers.merged),
      approvers: [...policy.spec.escalation.approvers],
    },
  };
}

/**
 * The default policy with `spec` fields overridden (objects merged one level deep), completed for
 * `baseDir`: what tests, benchmarks and scripts run against, without a policy file of their own.
 */
export function defaultPolicyWith(
  spec: Record<string, unknown> = {},
  { baseDir = process.cwd(), env = {} }: { baseDir?: string; env?: NodeJS.ProcessEnv } = {},
): CompliancePolicy {
  const raw = parseYaml(readFileSync(DEFAULT_POLICY_PATH, 'utf8')) as { spec: Record<string, unknown> };
  for (const [k, v] of Object.entries(spec)) {
    const cur = raw.spec[k];
    const mergeable = (x: unknown) => x !== null && typeof x === 'object' && !Array.isArray(x);
    raw.spec[k] = mergeable(v) && mergeable(cur) ? { ...(cur as object), ...(v as object) } : v;
  }
  return completePolicy(raw, { source: DEFAULT_POLICY_PATH, baseDir, env });
}

/** Validates an already-parsed policy object; see {@link loadPolicy}. */
export function completePolicy(
  raw: unknown,
  {
    source = 'policy',
    baseDir = process.cwd(),
    env = processEnv(),
    layers,
  }: { source?: string; baseDir?: string; env?: NodeJS.ProcessEnv; layers?: PolicyLayers } = {},
): CompliancePolicy {
  // `file:line` when the field is in the user's file: where to look, as compilers say it.
  const where = (path: string[]) => {
    const line = layers ? userLineOf(layers, path) : undefined;
    return `policy ${source}${line === undefined ? '' : `:${line}`}`;
  };
  const parsed = CompliancePolicySchema.safeParse(raw);
  if (!parsed.success) {
    // The line of the first problem (an unknown key's own line rather than its parent's).
    const first = parsed.error.issues[0];
    const at = first ? [...first.path.map(String), ...(first.code === 'unrecognized_keys' ? first.keys : [])] : [];
    throw new PolicyError(`${where(at)}: ${describeIssues('', parsed.error.issues)}`);
  }
  const policy = parsed.data;

  const seen = new Set<string>();
  for (const entry of policy.spec.riskMatrix) {
    if (seen.has(entry.actionType)) {
      throw new PolicyError(
        `${where(['spec', 'riskMatrix'])}: spec.riskMatrix: action type ${entry.actionType} is listed twice`,
      );
    }
    seen.add(entry.actionType);
  }
  for (const type of policy.spec.shadow) {
    if (tierFor(policy, type) === 'human-only') {
      throw new PolicyError(
        `${where(['spec', 'shadow'])}: spec.shadow: ${type} is human-only and cannot run in shadow mode`,
      );
    }
  }

  const abs = (p: string) => (isAbsolute(p) ? p : resolve(baseDir, p));
  policy.spec.exec.cwdRoots = policy.spec.exec.cwdRoots.map(abs);
  policy.spec.exec.git.repositories = policy.spec.exec.git.repositories.map((r) => ({ ...r, path: abs(r.path) }));
  policy.spec.files.roots = policy.spec.files.roots.map(abs);
  policy.spec.memory.dir = abs(policy.spec.memory.dir);
  policy.spec.audit.archive.dir = abs(policy.spec.audit.archive.dir);

  // Agents write inside files.roots: the memory store and the execution ledger (which makes
  // execution at-most-once) must not be reachable from there.
  const stateDir = resolve(baseDir, '.agent-judge');
  for (const root of policy.spec.files.roots) {
    if (isInside(policy.spec.memory.dir, root)) {
      throw new PolicyError(
        `${where(['spec', 'files', 'roots'])}: spec.files.roots: ${root} contains spec.memory.dir; ` +
          'agents could rewrite the memory store',
      );
    }
    if (isInside(stateDir, root)) {
      throw new PolicyError(
        `${where(['spec', 'files', 'roots'])}: spec.files.roots: ${root} contains ${stateDir}, ` +
          'where the execution ledger lives',
      );
    }
    if (isInside(policy.spec.audit.archive.dir, root)) {
      throw new PolicyError(
        `${where(['spec', 'files', 'roots'])}: spec.files.roots: ${root} contains spec.audit.archive.dir; ` +
          'agents could rewrite the archive',
      );
    }
  }

  const extra = (env.AGENT_JUDGE_APPROVERS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const id of extra) {
    if (!/^[A-Za-z0-9@][A-Za-z0-9@._:-]{0,127}$/.test(id)) {
      throw new PolicyError(`AGENT_JUDGE_APPROVERS: "${id}" is not a valid approver id`);
    }
  }
  policy.spec.escalation.approvers = [...new Set([...policy.spec.escalation.approvers, ...extra])];
  return policy;
}
