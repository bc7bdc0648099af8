import { Client, Connection } from '@temporalio/client';
import type { TemporalTarget } from './target';

export { temporalTarget, type TemporalTarget } from './target';

export async function connect(target: TemporalTarget): Promise<Connection> {
  return Connection.connect({
    address: target.address,
    tls: target.tls,
    apiKey: target.apiKey,
    metadata: {
      ...target.metadata,
      // Temporal Cloud routes API-key calls by this header.
      ...(target.apiKey ? { 'temporal-namespace': target.namespace } : {}),
    },
    connectTimeout: 5000,
  });
}

/** A client bound to one namespace; close the connection with `client.connection.close()`. */
export async function connectClient(target: TemporalTarget): Promise<Client> {
  const connection = await connect(target);
  return new Client({ connection, namespace: target.namespace });
}
