import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AgentJudgeError, AuditDamagedError } from '../../src/contracts/errors.js';
import { FailureType, NON_RETRYABLE_FAILURE_TYPES } from '../../src/contracts/lifecycle.js';
import { ChainError, ChainLockTimeoutError } from '../../src/audit/chain.js';
import { ArchiveIntegrityError } from '../../src/audit/archive.js';

/** Every .ts file under dir, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('one error family', () => {
  it('no class in src/ extends a built-in Error except the family root in contracts/errors.ts', () => {
    const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', 'src');
    const offenders = sources(root)
      .filter((path) => !path.endsWith(join('contracts', 'errors.ts')))
      .filter((path) => /class\s+\w+\s+extends\s+(Error|TypeError|RangeError)\b/.test(readFileSync(path, 'utf8')))
      .map((path) => relative(root, path));
    expect(offenders).toEqual([]);
  });

  it('a damaged audit trail is one non-retryable failure type, whichever layer finds it', () => {
    expect(new ChainError('x', 'log.jsonl')).toBeInstanceOf(AuditDamagedError);
    expect(new ArchiveIntegrityError('x')).toBeInstanceOf(AuditDamagedError);
    expect(new ChainError('x', 'log.jsonl').failureType).toBe(FailureType.AuditDamaged);
    expect(NON_RETRYABLE_FAILURE_TYPES).toContain(FailureType.AuditDamaged);
  });

  it('a lock timeout is retryable: a busy chain is not a damaged one', () => {
    const error = new ChainLockTimeoutError('x', 'log.jsonl');
    expect(error).toBeInstanceOf(AgentJudgeError);
    expect(error.retryable).toBe(true);
  });
});
