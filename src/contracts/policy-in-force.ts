/**
 * The policy in force, as the workflow workers publish it (issue 28): every process that maps, judges, executes or
 * decides can read which policy the workers judge with and compare it with its own, instead of two processes quietly
 * using two policies. The workflow worker publishes at start into one small workflow per workflow task queue
 * (src/workflows/policy-in-force.ts), which keeps the current publication in its memo (readable without a worker)
 * and a bounded list of versions: a history of policy changes.
 *
 * Informational, not an authorisation: a proposal is judged under the policy snapshot its own history records
 * (`policy_sha256` in its status), whatever this record says. Plain types and a hand-written check (no zod): the
 * workflow imports this.
 */
import { refusal, type Refusal } from './refusal';

/** What a workflow worker publishes about the policy it judges with. */
export interface PolicyPublication {
  /** SHA-256 of the canonical JSON of the policy as the worker completed it: what proposals and tokens record. */
  policy_sha256: string;
  /**
   * SHA-256 of the canonical JSON of the policy document (the file laid over the default, before relative paths are
   * resolved, `AGENT_JUDGE_APPROVERS` added or the dev capability key listed): what other processes compare theirs
   * with, so the same file gives the same digest on every host.
   */
  document_sha256: string;
  /** The policy document itself (JSON), so a process can say which fields differ from its own. */
  document: unknown;
  /** `metadata.name`. */
  name: string;
  /** The file the worker loaded (its own host's path). */
  source: string;
  /** Who published: `pid@host` and roles. */
  publisher: string;
  published_at: string;
  /**
   * The approvers the workers accept, as they completed the policy (the file's and `AGENT_JUDGE_APPROVERS`): what
   * `inbox invite` and the MCP proxy compare with. Absent from older publishers.
   */
  approvers?: string[];
  /** The web inbox people decide in (dev's own, or `AGENT_JUDGE_INBOX_URL`), when the workers know one. */
  inbox_url?: string;
}

/** One policy the workflow workers have judged with, and when. */
export interface PolicyVersion {
  version: number;
  policy_sha256: string;
  document_sha256: string;
  name: string;
  source: string;
  first_published_at: string;
  last_published_at: string;
  /** The last few publishers of this version. */
  publishers: string[];
}

/** The record: the current publication and the versions (oldest first, the last {@link MAX_POLICY_VERSIONS}). */
export interface PolicyInForce {
  current: PolicyPublication & { version: number };
  versions: PolicyVersion[];
}

/** What publishing answers: the version now in force, and the previous one when this publication changed it. */
export interface PolicyPublished {
  version: number;
  changed: boolean;
  previous: Omit<PolicyVersion, 'publishers'> | null;
}

export const MAX_POLICY_VERSIONS = 50;
const MAX_PUBLISHERS = 10;
/** A policy document is a few kilobytes; this bounds what anyone with namespace access can make the record hold. */
export const MAX_POLICY_DOCUMENT_BYTES = 256 * 1024;

const HEX64 = /^[0-9a-f]{64}$/;
const MAX_PUBLISHED_APPROVERS = 1000;

/** Why a publication is refused (the Update validator throws it), or null. Synchronous, no schema library. */
export function refusePublication(p: unknown): Refusal | null {
  if (p === null || typeof p !== 'object') return refusal('bad-input', 'expected an object');
  const o = p as Record<string, unknown>;
  for (const key of ['policy_sha256', 'document_sha256'] as const) {
    if (typeof o[key] !== 'string' || !HEX64.test(o[key]))
      return refusal('bad-input', `${key}: expected 64 lowercase hex digits`);
  }
  for (const key of ['name', 'source', 'publisher', 'published_at'] as const) {
    if (typeof o[key] !== 'string' || o[key].length === 0 || o[key].length > 1024)
      return refusal('bad-input', `${key}: expected a string of 1 to 1024 characters`);
  }
  if (
    o.approvers !== undefined &&
    (!Array.isArray(o.approvers) ||
      o.approvers.length > MAX_PUBLISHED_APPROVERS ||
      o.approvers.some((a) => typeof a !== 'string' || a.length === 0 || a.length > 256))
  )
    return refusal('bad-input', `approvers: expected at most ${MAX_PUBLISHED_APPROVERS} ids of 1 to 256 characters`);
  if (o.inbox_url !== undefined && (typeof o.inbox_url !== 'string' || !/^https?:\/\/[^\s]{1,1000}$/.test(o.inbox_url)))
    return refusal('bad-input', 'inbox_url: expected an http(s) URL');
  if (o.document === null || typeof o.document !== 'object')
    return refusal('bad-input', 'document: expected the policy document');
  if (JSON.stringify(o.document).length > MAX_POLICY_DOCUMENT_BYTES)
    return refusal('bad-input', `document: larger than ${MAX_POLICY_DOCUMENT_BYTES} bytes`);
  return null;
}

/** The record after `p` was published (pure: the workflow and the tests call it). */
export function applyPublication(
  record: PolicyInForce | null,
  p: PolicyPublication,
): { record: PolicyInForce; published: PolicyPublished } {
  const versions = [...(record?.versions ?? [])];
  const last = versions[versions.length - 1];
  if (last && last.policy_sha256 === p.policy_sha256) {
    const publishers = [...last.publishers.filter((x) => x !== p.publisher), p.publisher].slice(-MAX_PUBLISHERS);
    versions[versions.length - 1] = { ...last, last_published_at: p.published_at, publishers, source: p.source };
    return {
      record: { current: { ...p, version: last.version }, versions },
      published: { version: last.version, changed: false, previous: null },
    };
  }
  const version = (last?.version ?? 0) + 1;
  versions.push({
    version,
    policy_sha256: p.policy_sha256,
    document_sha256: p.document_sha256,
    name: p.name,
    source: p.source,
    first_published_at: p.published_at,
    last_published_at: p.published_at,
    publishers: [p.publisher],
  });
  const previous = last ? (({ publishers: _p, ...rest }) => rest)(last) : null;
  return {
    record: { current: { ...p, version }, versions: versions.slice(-MAX_POLICY_VERSIONS) },
    published: { version, changed: last !== undefined, previous },
  };
}
