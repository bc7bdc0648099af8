#!/usr/bin/env node
// The command hook, alone: `agent-judge-hook claude-code|codex|gemini [--url URL] [--token-file FILE]`. It loads
// only dist/hooks/client.js (Node's http and fs), so a hook call costs one small process start (docs/hooks.md).
let client;
try {
  client = await import('../dist/hooks/client.js');
} catch {
  process.stderr.write('agent-judge: the hook client is not built (npm run build); the call was not allowed\n');
  process.exit(2);
}
process.exitCode = await client.runHookClient(process.argv.slice(2));
