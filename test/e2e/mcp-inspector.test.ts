/**
 * Issue 10: the MCP Inspector (`@modelcontextprotocol/inspector --cli`, a client nobody here wrote) drives
 * `agent-judge mcp` the way a user's MCP client does, from an `mcpServers` config file, and the same Inspector runs
 * against the upstream itself for comparison. The Inspector needs Node 22 (scripts/test-tools.mjs installs both); it
 * swallows a literal `--` on its command line, which is why the servers come from a config file.
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERDICT_META_KEY } from '../../src/contracts/mcp';
import { toolPath } from '../helpers/tools';
import { EVERYTHING_SERVER, FS_SERVER, mcpSpec, proxyArgs, startMcpEnv, type McpEnv } from '../helpers/mcp';

interface InspectorRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

// The test setup installs both (scripts/test-tools.mjs), outside the project's node_modules.
const NODE22 = toolPath('node22');
const INSPECTOR = toolPath('inspector');

function inspector(config: string, server: string, method: string, extra: string[] = []): Promise<InspectorRun> {
  return new Promise((resolve) => {
    const child = spawn(
      NODE22,
      [INSPECTOR, '--cli', '--config', config, '--server', server, '--method', method, ...extra],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        // No OS keychain here: the Inspector keeps its (unused) secrets in memory instead of warning about it.
        env: { ...process.env, MCP_INSPECTOR_SECRET_STORE: 'memory' },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The Inspector's JSON answer (it prints one JSON document on stdout). */
async function inspectorJson(config: string, server: string, method: string, extra: string[] = [], exitCode = 0) {
  const r = await inspector(config, server, method, extra);
  if (r.code !== exitCode) throw new Error(`inspector ${server} ${method} exited ${r.code}: ${r.stderr}${r.stdout}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe('the MCP Inspector (CLI mode) as the client of agent-judge mcp', () => {
  let env: McpEnv;
  let config: string;
  beforeAll(async () => {
    env = await startMcpEnv(mcpSpec());
    writeFileSync(join(env.workspace, 'hello.txt'), 'hello from the workspace');
    config = join(env.baseDir, 'mcp.json');
    const node = process.execPath;
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          judged: { command: node, args: proxyArgs(env) },
          direct: { command: node, args: [FS_SERVER, env.baseDir] },
          'judged-everything': { command: node, args: proxyArgs(env, [node, EVERYTHING_SERVER, 'stdio']) },
          everything: { command: node, args: [EVERYTHING_SERVER, 'stdio'] },
        },
      }),
    );
  });
  afterAll(async () => {
    await env?.sys.stop();
  });

  it("tools/list: the upstream's tools, each with the optional _agent_judge argument", async () => {
    const direct = (await inspectorJson(config, 'direct', 'tools/list')).tools as Array<Record<string, unknown>>;
    const judged = (await inspectorJson(config, 'judged', 'tools/list')).tools as Array<Record<string, unknown>>;
    expect(judged.map((t) => t.name)).toEqual(direct.map((t) => t.name));
    for (const [i, tool] of judged.entries()) {
      const schema = tool.inputSchema as { properties: Record<string, unknown>; required?: string[] };
      const original = direct[i]!.inputSchema as typeof schema;
      const { _agent_judge: added, ...rest } = schema.properties;
      expect(added, `${String(tool.name)} has _agent_judge`).toMatchObject({ type: 'object' });
      expect(rest).toEqual(original.properties);
      expect(schema.required ?? []).not.toContain('_agent_judge');
      expect({ ...tool, inputSchema: null }).toEqual({ ...direct[i], inputSchema: null });
    }
  });

  // Six Inspector runs (each starts Node 22 and a server, ~3-10 s on a loaded 2-core machine).
  it("resources/list and prompts/list are the upstream's, unchanged", { timeout: 240_000 }, async () => {
    const judged: Record<string, Record<string, unknown>> = {};
    for (const method of ['resources/list', 'resources/templates/list', 'prompts/list']) {
      const direct = await inspectorJson(config, 'everything', method);
      judged[method] = await inspectorJson(config, 'judged-everything', method);
      expect(judged[method], method).toEqual(direct);
    }
    expect(judged['resources/list']!.resources).not.toHaveLength(0);
    expect(judged['prompts/list']!.prompts).not.toHaveLength(0);
  });

  it('a no-judge tools/call passes through', async () => {
    const path = join(env.workspace, 'hello.txt');
    const r = await inspectorJson(config, 'judged', 'tools/call', [
      '--tool-name',
      'read_text_file',
      '--tool-arg',
      `path=${path}`,
    ]);
    expect(r.isError).toBeFalsy();
    expect(JSON.stringify(r.content)).toContain('hello from the workspace');
  });

  it('a denied tools/call is an isError result with the verdict in _meta; nothing is written', async () => {
    const outside = join(env.baseDir, 'outside.txt');
    // The Inspector exits 5 on a tool result with isError: true (and says so on stderr); the result is on stdout.
    const r = await inspectorJson(
      config,
      'judged',
      'tools/call',
      ['--tool-name', 'write_file', '--tool-arg', `path=${outside}`, 'content=x'],
      5,
    );
    expect(r.isError).toBe(true);
    expect((r._meta as Record<string, unknown>)[VERDICT_META_KEY]).toMatchObject({
      outcome: 'REJECT',
      verdict: 'REJECT',
      rule: 'files.roots',
    });
    expect(JSON.stringify(r.content)).toContain('An identical call will be refused again');
    expect(existsSync(outside)).toBe(false);
  });
});
