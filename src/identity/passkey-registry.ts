/**
 * The passkey registry: one JSON file (AGENT_JUDGE_PASSKEYS) that the inbox writes when an approver enrols a passkey
 * and the workflow worker reads, merging it into the policy snapshot each proposal run gets (so a passkey enrolled
 * now signs decisions on proposals started from now on, without a worker restart). Node only.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { BadInputError } from '../contracts/errors';
import type { Logger } from '../contracts/logger';
import {
  PasskeyRegistrySchema,
  type ApproverPasskeys,
  type PasskeyCredential,
  type PasskeyRegistry,
} from '../contracts/passkey';
import type { CompliancePolicy } from '../contracts/policy';
import { describeIssues } from '../contracts/zod-error';
import { jsonSyntaxProblem } from '../contracts/syntax-position';

const EMPTY: PasskeyRegistry = { version: 1, approvers: {} };

/** Reads and checks a registry file; a file that does not exist is an empty registry. */
export function readPasskeyRegistry(path: string): PasskeyRegistry {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY;
    throw new BadInputError(`passkey registry ${path}: cannot read (${(err as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new BadInputError(`passkey registry ${path}: not valid JSON (${jsonSyntaxProblem(text, err)})`);
  }
  const parsed = PasskeyRegistrySchema.safeParse(json);
  if (!parsed.success) throw new BadInputError(describeIssues(`passkey registry ${path}`, parsed.error.issues));
  return parsed.data;
}

/** Adds one approver's passkey to the registry file (written whole to a temporary file, then renamed over it). */
export function addPasskey(path: string, approver: string, credential: PasskeyCredential): PasskeyRegistry {
  const current = readPasskeyRegistry(path);
  const own = Object.hasOwn(current.approvers, approver) ? (current.approvers[approver] ?? []) : [];
  if (own.some((c) => c.id === credential.id))
    throw new BadInputError(`passkey ${credential.id.slice(0, 16)}… is already registered for ${approver}`);
  const next: PasskeyRegistry = {
    version: 1,
    approvers: { ...current.approvers, [approver]: [...own, credential] },
  };
  const checked = PasskeyRegistrySchema.parse(next);
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(checked, null, 2)}\n`, { mode: 0o644 });
  renameSync(tmp, path);
  return checked;
}

/** Every passkey of each approver, from the policy and the registry, each credential id once. */
export function mergePasskeys(a: ApproverPasskeys, b: ApproverPasskeys): ApproverPasskeys {
  const out: ApproverPasskeys = {};
  for (const source of [a, b]) {
    for (const [approver, list] of Object.entries(source)) {
      const have = Object.hasOwn(out, approver) ? (out[approver] ?? []) : [];
      out[approver] = [...have, ...list.filter((c) => !have.some((h) => h.id === c.id))];
    }
  }
  return out;
}

/** The policy with the registry's passkeys added to `spec.escalation.approverPasskeys`. */
export function withPasskeys(policy: CompliancePolicy, registry: ApproverPasskeys): CompliancePolicy {
  if (Object.keys(registry).length === 0) return policy;
  const escalation = policy.spec.escalation;
  return {
    ...policy,
    spec: {
      ...policy.spec,
      escalation: { ...escalation, approverPasskeys: mergePasskeys(escalation.approverPasskeys ?? {}, registry) },
    },
  };
}

/**
 * The registry as the workflow worker reads it: re-read when the file changed, looked at no more than once every
 * `checkEveryMs` (a stat on each proposal's snapshot would be wasted). A file that turns unreadable or invalid keeps
 * the last good registry, and says so once, as a warning on `logger`.
 */
export class PasskeyRegistryReader {
  private registry: PasskeyRegistry = EMPTY;
  private mtimeMs = -1;
  private checkedAt = -Infinity;
  private lastError: string | null = null;

  constructor(
    readonly path: string,
    private readonly logger: Logger,
    private readonly checkEveryMs = 1000,
  ) {
    this.refresh(true);
  }

  /** Approver id -> passkeys, as of the last check. */
  current(): ApproverPasskeys {
    this.refresh(false);
    return this.registry.approvers;
  }

  private refresh(force: boolean): void {
    const now = Date.now();
    if (!force && now - this.checkedAt < this.checkEveryMs) return;
    this.checkedAt = now;
    let mtimeMs: number;
    try {
      mtimeMs = statSync(this.path).mtimeMs;
    } catch {
      mtimeMs = 0;
    }
    if (mtimeMs === this.mtimeMs) return;
    try {
      this.registry = mtimeMs === 0 ? EMPTY : readPasskeyRegistry(this.path);
      this.mtimeMs = mtimeMs;
      this.lastError = null;
    } catch (err) {
      const message = (err as Error).message;
      if (message !== this.lastError) {
        this.logger.warn(
          { path: this.path, err: message },
          'passkey registry unreadable; keeping the passkeys read before',
        );
      }
      this.lastError = message;
      if (force) throw err;
    }
  }
}
