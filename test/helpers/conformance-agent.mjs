/**
 * The "client under test" for the MCP conformance suite's client mode: an agent (the real SDK client) whose only MCP
 * server is `agent-judge mcp --upstream-url <the suite's test server>`. The suite appends the server URL to the
 * command and names the scenario in MCP_CONFORMANCE_SCENARIO; the proxy's settings come as JSON in
 * AGENT_JUDGE_CONFORMANCE ({ bin, args }). What the agent got back is printed on stdout (the suite keeps it).
 */
import process from 'node:process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO;
const { bin, args } = JSON.parse(process.env.AGENT_JUDGE_CONFORMANCE ?? '{}');

const client = new Client({ name: 'agent-judge-conformance-agent', version: '1.0.0' });
await client.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp', ...args, '--upstream-url', url],
    stderr: 'inherit',
  }),
);
const seen = { scenario, server: client.getServerVersion() };
if (scenario === 'tools_call') {
  seen.tools = (await client.listTools()).tools.map((t) => t.name);
  seen.result = await client.callTool({ name: 'add_numbers', arguments: { a: 5, b: 3 } });
}
process.stdout.write(`${JSON.stringify(seen)}\n`);
await client.close();
