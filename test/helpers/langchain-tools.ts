/**
 * The application's tools test/integration/adapter-langchain.test.ts gives its `createAgent` agent: LangChain tools
 * that count how often each really ran and with what, one that throws and one that answers its own error
 * ToolMessage. Kept apart from the test so the test reads as its cases.
 */
import { tool, ToolMessage, type ToolRuntime } from 'langchain';
import { z } from 'zod';

/** The application's tools, each counting how often it really ran (and with what). */
export function langchainTools() {
  const ran = { read_note: 0, deploy: 0, comment: 0, migrate: 0, notify: 0, write_file: 0 };
  const deployed: string[] = [];
  const written: Array<{ path: string; text: string }> = [];
  return {
    ran,
    deployed,
    written,
    tools: [
      tool(
        ({ path }) => {
          ran.read_note++;
          return `contents of ${path}`;
        },
        { name: 'read_note', description: 'Read a note from the vault', schema: z.object({ path: z.string() }) },
      ),
      tool(
        ({ service }) => {
          ran.deploy++;
          deployed.push(service);
          return `deployed ${service}`;
        },
        {
          name: 'deploy',
          description: 'Deploy a service to production',
          schema: z.object({ service: z.string() }),
        },
      ),
      tool(
        () => {
          ran.comment++;
          return 'commented';
        },
        { name: 'comment', description: 'Comment on the issue', schema: z.object({ body: z.string() }) },
      ),
      tool(
        (): string => {
          ran.migrate++;
          throw new Error('the database refused the migration');
        },
        { name: 'migrate', description: 'Migrate the database', schema: z.object({ version: z.number() }) },
      ),
      tool(
        (_input, runtime) => {
          ran.notify++;
          // The tool's own error answer: it ran, and says it failed.
          return new ToolMessage({
            content: 'the pager quota is used up',
            tool_call_id: (runtime as ToolRuntime).toolCallId,
            status: 'error',
          });
        },
        { name: 'notify', description: 'Page the on-call person', schema: z.object({ text: z.string() }) },
      ),
      tool(
        ({ path, text }) => {
          ran.write_file++;
          written.push({ path, text });
          return `wrote ${text.length} characters to ${path}`;
        },
        {
          name: 'write_file',
          description: 'Write a text file',
          schema: z.object({ path: z.string(), text: z.string() }),
        },
      ),
    ],
  };
}
