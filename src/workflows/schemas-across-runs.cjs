/*
 * Stands in for ./schemas.ts inside workflow bundles made with workflowBundlerOptions (a webpack alias): the first
 * run on a worker thread evaluates ./schemas.ts (and zod, the schemas, the hash functions behind it); every later
 * run gets the same exports from ./across-runs.ts, a preloaded module, without evaluating anything. CommonJS so that
 * its exports can be that object itself. The request below names the file with its extension, which the alias (on
 * the extensionless path) does not match.
 */
/* eslint-disable @typescript-eslint/no-require-imports, no-undef */
const { acrossRuns } = require('./across-runs');

module.exports = acrossRuns('workflow-schemas', () => require('./schemas.ts'));
