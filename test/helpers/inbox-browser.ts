/**
 * A minimal browser for driving the inbox over HTTP in tests: one cookie jar, the page's CSRF token read from the
 * page as the inline script reads it, and every header under the test's control (Origin, Host), which `fetch` would
 * not allow. node:http only, so what is sent is exactly what the test says.
 */
import { request } from 'node:http';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: Record<string, unknown>;
}

export class InboxBrowser {
  private cookies = new Map<string, string>();
  csrf = '';

  constructor(readonly base: string) {}

  /** Sends one request; remembers cookies; reads the CSRF token from a page's meta tag. */
  async send(
    method: 'GET' | 'POST',
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; csrf?: boolean; form?: boolean; raw?: boolean } = {},
  ): Promise<HttpAnswer> {
    const url = new URL(path, this.base);
    const body =
      options.body === undefined
        ? undefined
        : options.raw
          ? (options.body as string)
          : options.form
            ? new URLSearchParams(options.body as Record<string, string>).toString()
            : JSON.stringify(options.body);
    const headers: Record<string, string> = {
      host: url.host,
      ...(this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
      ...(method === 'POST'
        ? {
            origin: new URL(this.base).origin,
            'content-type': options.form ? 'application/x-www-form-urlencoded' : 'application/json',
            ...(options.csrf === false ? {} : { 'x-csrf-token': this.csrf }),
          }
        : {}),
      ...options.headers,
    };
    const answer = await new Promise<HttpAnswer>((resolveAnswer, rejectAnswer) => {
      const req = request(
        // The inbox listens on 127.0.0.1; the Host header carries the public name.
        { host: '127.0.0.1', port: url.port, path: url.pathname + url.search, method, headers, timeout: 30_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: Record<string, unknown> = {};
            try {
              json = JSON.parse(text) as Record<string, unknown>;
            } catch {
              /* a page, not JSON */
            }
            resolveAnswer({ status: res.statusCode ?? 0, headers: res.headers, text, json });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 30 s`)));
      req.on('error', rejectAnswer);
      if (body !== undefined) req.write(body);
      req.end();
    });
    for (const line of [answer.headers['set-cookie'] ?? []].flat()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const value = pair!.slice(eq + 1);
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(pair!.slice(0, eq));
      else this.cookies.set(pair!.slice(0, eq), value);
    }
    const meta = /<meta name="csrf-token" content="([^"]+)"/.exec(answer.text);
    if (meta) this.csrf = meta[1]!;
    return answer;
  }

  get(path: string, headers?: Record<string, string>): Promise<HttpAnswer> {
    return this.send('GET', path, { headers });
  }

  post(path: string, body: unknown, options: { headers?: Record<string, string>; csrf?: boolean } = {}) {
    return this.send('POST', path, { body, ...options });
  }
}

/** The visible text of a page: tags dropped, entities decoded, whitespace collapsed (what a person reads). */
export function visibleText(page: string): string {
  return page
    .replace(/<script[\s\S]*?<\/script>/g, ' ')
    .replace(/<style[\s\S]*?<\/style>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}
