/**
 * docker-compose.temporal.yml keeps closed proposals as long as the policy's default retention (issue 11). No Docker
 * engine runs here, so the compose file itself is not started; what it asks Temporal to do is checked instead: its
 * one-shot `temporal-namespace` service's exact shell command, run with the real Temporal CLI against the real test
 * server (only the address and namespace swapped for ours), creates a namespace that keeps closed workflows as long as
 * the default policy's retention, and sets that retention on one created before with Temporal's one day.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { durationMs } from '../../src/contracts/duration';
import { findTemporalCli } from '../../src/devserver/temporal-cli';
import { silentLogger } from '../helpers/logger';
import { namespaceRetentionMs } from '../../src/devserver/retention';
import { defaultPolicyWith } from '../../src/policy/load';

const run = promisify(execFile);
const COMPOSE = new URL('../../docker-compose.temporal.yml', import.meta.url);

interface Compose {
  services: Record<string, { environment?: Record<string, string>; command?: string[] }>;
}

const compose = parseYaml(readFileSync(COMPOSE, 'utf8')) as Compose;
const policyRetentionMs = durationMs(defaultPolicyWith().spec.audit.retention);
const namespaceJob = compose.services['temporal-namespace'];
const script = namespaceJob?.command?.join('\n') ?? '';

/** Runs the service's command as its image would (`sh -c`), with the real CLI, our server and `namespace`. */
async function runNamespaceJob(namespace: string): Promise<void> {
  const cli = findTemporalCli({ logger: silentLogger });
  await run('sh', ['-c', script.replace(/ default\b/g, ` ${namespace}`)], {
    env: {
      ...process.env,
      PATH: `${dirname(cli)}:${process.env.PATH ?? ''}`,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
    },
  });
}

describe('docker-compose.temporal.yml and the audit retention', () => {
  let connection: Connection;
  beforeAll(async () => {
    connection = await Connection.connect({ address: inject('temporalAddress') });
  });
  afterAll(async () => {
    await connection.close();
  });

  it("gives the namespace the default policy's retention", () => {
    expect(namespaceJob?.environment?.TEMPORAL_ADDRESS).toBe('temporal:7233');
    const retentions = [...script.matchAll(/--retention (\d+)h default/g)].map((m) => Number(m[1]) * 3_600_000);
    expect(retentions).toEqual([policyRetentionMs, policyRetentionMs]);
  });

  it('its command, run by the real CLI, creates a new namespace with that retention', async () => {
    const namespace = `compose-retention-${randomUUID().slice(0, 8)}`;
    await runNamespaceJob(namespace);
    expect(await namespaceRetentionMs(connection, namespace)).toBe(policyRetentionMs);
  });

  it("its command, run by the real CLI, sets an old namespace's retention", async () => {
    const namespace = `compose-retention-${randomUUID().slice(0, 8)}`;
    const cli = findTemporalCli({ logger: silentLogger });
    // A database created before the compose file set the retention: Temporal's own one day.
    await run(cli, [
      'operator',
      'namespace',
      'create',
      '--address',
      inject('temporalAddress'),
      '--retention',
      '24h',
      namespace,
    ]);
    expect(await namespaceRetentionMs(connection, namespace)).toBe(86_400_000);
    await runNamespaceJob(namespace);
    expect(await namespaceRetentionMs(connection, namespace)).toBe(policyRetentionMs);
  });
});
