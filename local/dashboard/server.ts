import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DashboardSnapshot } from '../live-figures.ts';

/** Options of {@link DashboardServer.start}. */
export interface DashboardOptions {
  /** @default '127.0.0.1' (the dashboard shows queue URLs: keep it off other interfaces) */
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** When `port` is taken, take a free one instead of failing. @default false */
  readonly fallbackToFreePort?: boolean;
  /** The document to show, read on every request and push. */
  readonly snapshot: () => DashboardSnapshot;
  /**
   * The history of one aggregate (shared/use-cases/history.ts), for `/api/history?aggregate=<id>`:
   * the page shows it when an aggregate is clicked, and asks again every second while it is open.
   */
  readonly history?: (aggregateId: string) => Promise<{ readonly status: string }>;
  /** The active aggregates to click (one page of the `due` index), for `/api/aggregates`. */
  readonly aggregates?: () => Promise<unknown>;
}

/**
 * The dashboard: one static page (`index.html`) that renders the runtime's {@link DashboardSnapshot},
 * pushed to it with Server-Sent Events (`/api/events`) after every sample; `/api/snapshot` serves
 * the same document once, for scripts and for the page's first paint. `/api/history?aggregate=<id>`
 * serves one aggregate's history (the timeline `fanin history` prints), `/api/aggregates` the
 * active aggregates to click.
 */
export class DashboardServer {
  /** The page's address, e.g. `http://127.0.0.1:4780/`. */
  public readonly url: string;
  private readonly server: Server;
  private readonly options: DashboardOptions;
  private readonly clients = new Set<ServerResponse>();
  private readonly keepAlive: NodeJS.Timeout;

  private constructor(server: Server, options: DashboardOptions, url: string) {
    this.server = server;
    this.options = options;
    this.url = url;
    // Proxies and browsers drop an idle event stream; a comment line every 15 s keeps it open.
    this.keepAlive = setInterval(() => {
      for (const client of this.clients) client.write(': keep-alive\n\n');
    }, 15_000);
    this.keepAlive.unref();
  }

  /** Starts listening. */
  public static async start(options: DashboardOptions): Promise<DashboardServer> {
    const page = await readFile(new URL('./index.html', import.meta.url), 'utf8');
    const host = options.host ?? '127.0.0.1';
    let dashboard: DashboardServer | undefined;
    const server = createServer((request, response) => {
      if (!dashboard) {
        response.writeHead(503).end();
        return;
      }
      dashboard.handle(request, response, page);
    });
    const port = await listen(server, host, options.port).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EADDRINUSE' || !options.fallbackToFreePort) throw error;
      return listen(server, host, 0);
    });
    dashboard = new DashboardServer(server, options, `http://${host}:${port}/`);
    return dashboard;
  }

  /** How many pages are connected. */
  public get connected(): number {
    return this.clients.size;
  }

  /** Sends the current snapshot to every open page. */
  public push(): void {
    if (this.clients.size === 0) return;
    const data = `event: snapshot\ndata: ${JSON.stringify(this.options.snapshot())}\n\n`;
    for (const client of this.clients) client.write(data);
  }

  /** Ends every event stream and stops listening. */
  public async close(): Promise<void> {
    clearInterval(this.keepAlive);
    for (const client of this.clients) client.end();
    this.clients.clear();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private answer(response: ServerResponse, read: Answer): void {
    read()
      .catch((error: Error) => ({ status: 500, body: { error: `${error.name}: ${error.message}` } }))
      .then(({ status, body }) => {
        response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        response.end(JSON.stringify(body));
      });
  }

  private handle(request: IncomingMessage, response: ServerResponse, page: string): void {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    switch (path) {
      case '/':
      case '/index.html':
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        response.end(page);
        return;
      case '/api/snapshot':
        response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        response.end(JSON.stringify(this.options.snapshot()));
        return;
      case '/api/history':
        this.answer(response, async () => {
          const aggregateId = new URL(request.url ?? '/', 'http://localhost').searchParams.get('aggregate');
          if (!aggregateId || !this.options.history)
            return { status: 400, body: { error: 'aggregate=<id> is needed' } };
          const found = await this.options.history(aggregateId);
          return { status: found.status === 'not found' ? 404 : 200, body: found };
        });
        return;
      case '/api/aggregates':
        this.answer(response, async () =>
          this.options.aggregates
            ? { status: 200, body: await this.options.aggregates() }
            : { status: 404, body: { error: 'no aggregate listing' } },
        );
        return;
      case '/api/events':
        response.writeHead(200, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-store',
          connection: 'keep-alive',
        });
        response.write(`retry: 2000\nevent: snapshot\ndata: ${JSON.stringify(this.options.snapshot())}\n\n`);
        this.clients.add(response);
        request.on('close', () => this.clients.delete(response));
        return;
      default:
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  }
}

/** The JSON of a read the page asked for; a failed read is a 500 with its message, never a crash. */
type Answer = () => Promise<{ readonly status: number; readonly body: unknown }>;

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      server.off('listening', onListening);
      reject(error);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}
