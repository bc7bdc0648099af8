/**
 * docker-compose.temporal.yml keeps closed proposals as long as the policy's default retention (issue 11). No Docker
 * engine runs here, so the compose file itself is not started; what it asks Temporal to do is checked instead: the
 * retention it gives auto-setup equals the default policy's, and its one-shot `namespace-retention` service's exact
 * command, run with the real Temporal CLI against the real test server (only the address and namespace swapped for
 * ours), leaves a namespace that keeps closed workflows that long.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { durationMs } from '../../src/contracts/duration';
import { findTemporalCli } from '../../src/devserver/temporal-cli';
import { namespaceRetentionMs } from '../../src/devserver/retention';
import { defaultPolicyWith } from '../../src/policy/load';

const run = promisify(execFile);
const COMPOSE = new URL('../../docker-compose.temporal.yml', import.meta.url);

interface Compose {
  services: Record<string, { environment?: Record<string, string>; entrypoint?: string[] }>;
}

const compose = parseYaml(readFileSync(COMPOSE, 'utf8')) as Compose;
const policyRetentionMs = durationMs(defaultPolicyWith().spec.audit.retention);

describe('docker-compose.temporal.yml and the audit retention', () => {
  let connection: Connection;
  beforeAll(async () => {
    connection = await Connection.connect({ address: inject('temporalAddress') });
  });
  afterAll(async () => {
    await connection.close();
  });

  it("gives auto-setup the default policy's retention for the namespace it creates", () => {
    const retention = compose.services.temporal?.environment?.DEFAULT_NAMESPACE_RETENTION;
    expect(retention).toMatch(/^\d+h$/);
    expect(Number.parseInt(retention!, 10) * 3_600_000).toBe(policyRetentionMs);
  });

  it("its namespace-retention command, run by the real CLI, sets an old namespace's retention", async () => {
    const entrypoint = compose.services['namespace-retention']?.entrypoint ?? [];
    expect(entrypoint.slice(0, 4)).toEqual(['temporal', 'operator', 'namespace', 'update']);
    const namespace = `compose-retention-${randomUUID().slice(0, 8)}`;
    const cli = findTemporalCli();
    const address = inject('temporalAddress');
    // A database created before the compose file set the retention: Temporal's own one day.
    await run(cli, ['operator', 'namespace', 'create', '--address', address, '--retention', '24h', namespace]);
    expect(await namespaceRetentionMs(connection, namespace)).toBe(86_400_000);

    // The compose command with only the cluster's address and the namespace (its last argument) made ours.
    const args = entrypoint.slice(1, -1).map((a, i, all) => (all[i - 1] === '--address' ? address : a));
    expect(entrypoint.at(-1)).toBe('default');
    await run(cli, [...args, namespace]);
    expect(await namespaceRetentionMs(connection, namespace)).toBe(policyRetentionMs);
  });
});
