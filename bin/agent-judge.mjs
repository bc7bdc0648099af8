#!/usr/bin/env node
// Entry point: runs the compiled CLI (dist/, made by `npm run build`; `npm ci` builds it through `prepare`).
// The command hook takes a short path: one tool call, one process, nothing loaded but the hook client.
if (process.argv[2] === 'hook' && ['claude-code', 'codex', 'gemini'].includes(process.argv[3])) {
  let client;
  try {
    client = await import('../dist/hooks/client.js');
  } catch {
    process.stderr.write('agent-judge: the hook client is not built (npm run build); the call was not allowed\n');
    process.exit(2);
  }
  process.exitCode = await client.runHookClient(process.argv.slice(3));
} else {
  await runCli();
}

async function runCli() {
  let cli;
  try {
    cli = await import('../dist/cli/main.js');
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('dist')) throw err;
    process.stderr.write('agent-judge: the CLI is not built yet; run `npm run build` in the agent-judge checkout\n');
    process.exit(1);
  }
  process.exitCode = await cli.main(process.argv);
}
