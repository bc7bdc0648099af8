// What test/global-setup.ts provides to every test file (`inject('temporalAddress')`).
import type {} from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalNamespace: string;
  }
}
