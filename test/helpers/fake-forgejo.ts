/**
 * A loopback Forgejo REST API holding a few issues and pull requests: just enough of
 * `GET /api/v1/repos/{owner}/{repo}/issues/{index}` for evidence verification, over real HTTP.
 * Requests it does not know are recorded as problems; `assertDone()` throws on them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeIssue {
  /** `owner/repo` as Forgejo reports it in `repository.full_name`. */
  fullName: string;
  number: number;
  state: 'open' | 'closed';
  pull?: boolean;
  /** Also answer under this `owner/repo` (a renamed or transferred repository redirects). */
  alias?: string;
}

export interface FakeForgejo {
  /** e.g. `http://127.0.0.1:PORT/api/v1`. */
  apiBaseUrl: string;
  /** Paths requested, in order. */
  requests: string[];
  /** Authorization headers seen. */
  authorizations: Array<string | undefined>;
  problems: string[];
  assertDone(): void;
  close(): Promise<void>;
}

export async function startFakeForgejo(
  issues: FakeIssue[],
  options: { token?: string; delayMs?: number } = {},
): Promise<FakeForgejo> {
  const requests: string[] = [];
  const authorizations: Array<string | undefined> = [];
  const problems: string[] = [];
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json;charset=utf-8' });
      res.end(text);
    };
    const path = req.url ?? '';
    requests.push(path);
    authorizations.push(req.headers.authorization);
    const respond = () => {
      if (res.destroyed) return;
      const m = /^\/api\/v1\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)$/.exec(path);
      if (req.method !== 'GET' || !m) {
        problems.push(`unexpected request ${req.method} ${path}`);
        send(404, { message: 'not found', url: '' });
        return;
      }
      if (options.token && req.headers.authorization !== `token ${options.token}`) {
        send(401, { message: 'token is required', url: '' });
        return;
      }
      const repo = `${decodeURIComponent(m[1] as string)}/${decodeURIComponent(m[2] as string)}`.toLowerCase();
      const issue = issues.find(
        (i) => i.number === Number(m[3]) && (i.fullName.toLowerCase() === repo || i.alias?.toLowerCase() === repo),
      );
      if (!issue) {
        send(404, { errors: null, message: "The target couldn't be found.", url: '' });
        return;
      }
      const [owner, name] = issue.fullName.split('/') as [string, string];
      send(200, {
        id: 1000 + issue.number,
        number: issue.number,
        title: `issue ${issue.number}`,
        state: issue.state,
        html_url: `http://forge.example.test/${issue.fullName}/${issue.pull ? 'pulls' : 'issues'}/${issue.number}`,
        pull_request: issue.pull ? { merged: false, merged_at: null } : null,
        repository: { id: 7, name, owner, full_name: issue.fullName },
      });
    };
    if (options.delayMs) setTimeout(respond, options.delayMs);
    else respond();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiBaseUrl: `http://127.0.0.1:${port}/api/v1`,
    requests,
    authorizations,
    problems,
    assertDone() {
      if (problems.length > 0) throw new Error(`fake-forgejo: ${problems.join('; ')}`);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
