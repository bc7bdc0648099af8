#!/usr/bin/env node
// Entry point: runs the compiled CLI (dist/, made by `npm run build`; `npm ci` builds it through `prepare`).
let cli;
try {
  cli = await import('../dist/cli/main.js');
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('dist')) throw err;
  process.stderr.write('agent-judge: the CLI is not built yet; run `npm run build` in the agent-judge checkout\n');
  process.exit(1);
}
process.exitCode = await cli.main(process.argv);
