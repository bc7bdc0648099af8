// A tap in front of a real MCP server (stdio both sides), for fault tests of the MCP proxy: it logs every
// `tools/call` that reaches the upstream to a file (so a test counts how often a call really went upstream, across
// proxy restarts), and can stop one tool's calls at a chosen point so a test kills the proxy exactly there:
//   node mcp-tap-upstream.mjs <log file> <mode> <upstream command...>
// mode: `pass` | `hold-request:<tool>` (logged, never sent on: the upstream never sees it) |
// `hold-response:<tool>` (sent on; the upstream's answer is logged and never sent back).
// Every other message the proxy sends on is logged too (`message`: its method and id), and a batch (`batch`).
// It exits when its stdin ends (the proxy died), after the upstream has finished what it was given.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import process from 'node:process';
import { createInterface } from 'node:readline';

const [logFile, mode, command, ...args] = process.argv.slice(2);
if (!logFile || !mode || !command) {
  process.stderr.write('usage: mcp-tap-upstream.mjs <log file> <mode> <upstream command...>\n');
  process.exit(2);
}
const [how, heldTool] = mode.split(':');
const log = (entry) => appendFileSync(logFile, `${JSON.stringify({ pid: process.pid, ...entry })}\n`);

const upstream = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
/** Ids of held-response calls: their answers are swallowed. */
const swallowed = new Set();

createInterface({ input: process.stdin }).on('line', (line) => {
  if (!line.trim()) return;
  const m = JSON.parse(line);
  if (Array.isArray(m)) log({ event: 'batch', methods: m.map((e) => e?.method ?? null) });
  else if (m.method !== 'tools/call') log({ event: 'message', method: m.method ?? null, id: m.id ?? null });
  if (m.method === 'tools/call') {
    const tool = m.params?.name;
    const held = tool === heldTool;
    log({ event: 'call', id: m.id, tool, arguments: m.params?.arguments, held: held ? how : null });
    if (held && how === 'hold-request') return;
    if (held && how === 'hold-response') swallowed.add(m.id);
  }
  upstream.stdin.write(`${line}\n`);
});
process.stdin.on('end', () => upstream.stdin.end());

createInterface({ input: upstream.stdout }).on('line', (line) => {
  if (!line.trim()) return;
  const m = JSON.parse(line);
  if (m.id !== undefined && m.method === undefined && swallowed.has(m.id)) {
    swallowed.delete(m.id);
    log({ event: 'answer-held', id: m.id, isError: m.result?.isError ?? null, error: m.error ?? null });
    return;
  }
  process.stdout.write(`${line}\n`);
});
upstream.on('exit', (code) => process.exit(code ?? 0));
process.stdout.on('error', () => undefined);
