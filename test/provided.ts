// What test/global-setup.ts provides to every test file (`inject('temporalAddress')`).
import type {} from 'vitest';
import type { TestTools } from '../scripts/test-tools.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalNamespace: string;
    /** Where each tool the tests drive is (scripts/test-tools.mjs installs what is missing); read via toolPath. */
    tools: TestTools;
    /** Tools that could not be found or installed, with the reason. */
    missingTools: Partial<Record<keyof TestTools, string>>;
  }
}
