// What test/global-setup.ts provides to every test file (`inject('temporalAddress')`).
import type {} from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalNamespace: string;
    /** A Node 22 binary (scripts/node22.mjs) for the MCP Inspector's CLI and the conformance suite. */
    node22Path: string;
  }
}
