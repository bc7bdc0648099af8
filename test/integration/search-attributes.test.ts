/**
 * The search attributes the worker registers on a namespace that lacks them (a reused database, a real cluster):
 * each with the type the workflows write. AuditFlag was once registered as Datetime, which `start-dev`'s own flags
 * hid; on a cluster the third REJECT on a target then failed its workflow task forever.
 */
import { randomUUID } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SearchAttributeTypeError } from '../../src/contracts/errors';
import { ensureSearchAttributes } from '../../src/devserver/server';
import { SA } from '../../src/names';
import { registerNamespace } from '../existing-server';

let connection: Connection;

/** A namespace of its own; a new one takes a moment to reach the server's namespace cache. */
async function freshNamespace(): Promise<string> {
  const namespace = `sa-${randomUUID().slice(0, 8)}`;
  await registerNamespace(connection, namespace);
  for (let i = 0; i < 120; i++) {
    try {
      await connection.operatorService.listSearchAttributes({ namespace });
      return namespace;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`namespace ${namespace} never became usable`);
}

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
});
afterAll(async () => connection?.close());

describe('ensureSearchAttributes', () => {
  it('registers AuditFlag as Bool and the rest as Keyword, once', async () => {
    const namespace = await freshNamespace();
    const added = await ensureSearchAttributes(connection, namespace);
    expect(added).toContain(SA.AuditFlag.name);
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    // temporal.api.enums.v1.IndexedValueType: KEYWORD = 2, BOOL = 5.
    expect(customAttributes?.[SA.AuditFlag.name]).toBe(5);
    for (const name of added.filter((n) => n !== SA.AuditFlag.name)) expect(customAttributes?.[name]).toBe(2);
    expect(await ensureSearchAttributes(connection, namespace)).toEqual([]);
  });

  it('refuses a namespace where one has another type, naming it and the commands that fix it', async () => {
    const namespace = await freshNamespace();
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: { [SA.AuditFlag.name]: 6 },
    });
    const err = await ensureSearchAttributes(connection, namespace).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SearchAttributeTypeError);
    expect((err as Error).message).toContain(
      `${SA.AuditFlag.name} is DATETIME on namespace ${namespace}, expected BOOL`,
    );
    expect((err as Error).message).toContain(
      `temporal operator search-attribute remove --namespace ${namespace} --name ${SA.AuditFlag.name}`,
    );
  });
});
