// A local forward proxy that applies the outbound address policy to programs Folio runs (git): every
// CONNECT (https) and every plain-http request is checked on the address it will actually connect
// to, and the connection goes to exactly that address — the program's own name lookup and any
// redirect it follows end up here too, so neither DNS rebinding nor a redirect can reach an internal
// address. It listens on loopback and answers only clients holding a session's credential; each
// session records what was refused, so the caller can say why a command failed.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { OutboundRefusedError, resolveAllowed, systemResolve, UnresolvedHostError, type OutboundPolicy, type Resolve } from './address-policy.ts';

export interface ProxySession {
  /** `http://user:password@127.0.0.1:port`: the value of git's http.proxy for this command. */
  readonly url: string;
  /** Refusals made for this session (sentences from the address policy). */
  readonly refused: readonly string[];
  /** Stops accepting this session's credential. */
  end(): void;
}

interface SessionState {
  password: Buffer;
  refused: string[];
}

/** Headers that belong to one hop (RFC 9110 §7.6.1) or to the proxy: never forwarded. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-authorization', 'proxy-connection', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

export class EgressProxy {
  readonly #server: http.Server;
  readonly #policy: OutboundPolicy;
  readonly #resolve: Resolve;
  readonly #sessions = new Map<string, SessionState>();
  #port = 0;

  private constructor(policy: OutboundPolicy, resolve: Resolve) {
    this.#policy = policy;
    this.#resolve = resolve;
    this.#server = http.createServer((req, res) => void this.#forward(req, res));
    this.#server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => void this.#tunnel(req, socket, head));
    this.#server.on('clientError', (_err, socket) => socket.destroy());
  }

  static async start(policy: OutboundPolicy, resolve: Resolve = systemResolve): Promise<EgressProxy> {
    const proxy = new EgressProxy(policy, resolve);
    await new Promise<void>((ok, fail) => {
      proxy.#server.once('error', fail);
      proxy.#server.listen(0, '127.0.0.1', ok);
    });
    proxy.#port = (proxy.#server.address() as net.AddressInfo).port;
    proxy.#server.unref(); // an idle proxy never keeps the process alive
    return proxy;
  }

  /** A credential for one command; end() it when the command is done. */
  session(): ProxySession {
    const user = randomBytes(9).toString('hex');
    const password = randomBytes(18).toString('hex');
    const state: SessionState = { password: Buffer.from(password), refused: [] };
    this.#sessions.set(user, state);
    return {
      url: `http://${user}:${password}@127.0.0.1:${this.#port}`,
      refused: state.refused,
      end: () => this.#sessions.delete(user),
    };
  }

  async close(): Promise<void> {
    this.#sessions.clear();
    this.#server.closeAllConnections();
    await new Promise<void>((ok) => this.#server.close(() => ok()));
  }

  /** The session a request's Proxy-Authorization names, or null. */
  #session(req: http.IncomingMessage): SessionState | null {
    const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(req.headers['proxy-authorization'] ?? '');
    if (!m) return null;
    const [user, password] = Buffer.from(m[1], 'base64').toString('utf8').split(':', 2);
    const state = this.#sessions.get(user ?? '');
    const given = Buffer.from(password ?? '');
    return state && given.length === state.password.length && timingSafeEqual(given, state.password) ? state : null;
  }

  /** The address to connect to for `host`, or null after recording why not. */
  async #allowed(state: SessionState, host: string): Promise<string | null> {
    try {
      return (await resolveAllowed(host, this.#policy, this.#resolve)).address;
    } catch (err) {
      if (err instanceof OutboundRefusedError) state.refused.push(err.message);
      else if (!(err instanceof UnresolvedHostError)) throw err;
      return null;
    }
  }

  async #tunnel(req: http.IncomingMessage, socket: net.Socket, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    const state = this.#session(req);
    if (!state) return void socket.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="folio"\r\nConnection: close\r\n\r\n');
    const target = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(req.url ?? '');
    if (!target) return void socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    const address = await this.#allowed(state, target[1]).catch(() => null);
    if (!address) return void socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    const upstream = net.connect(Number(target[2]), address);
    upstream.on('error', () => socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    upstream.once('connect', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
  }

  async #forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const state = this.#session(req);
    if (!state) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="folio"' });
      return void res.end();
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:') throw new Error('not http');
    } catch {
      res.writeHead(400);
      return void res.end();
    }
    const address = await this.#allowed(state, url.hostname).catch(() => null);
    if (!address) {
      res.writeHead(403);
      return void res.end();
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !HOP_HEADERS.has(k)));
    const upstream = http.request({ host: address, port: url.port || 80, method: req.method, path: url.pathname + url.search, headers: { ...headers, host: url.host } });
    upstream.on('response', (up) => {
      const back = Object.fromEntries(Object.entries(up.headers).filter(([k]) => !HOP_HEADERS.has(k)));
      res.writeHead(up.statusCode ?? 502, back);
      up.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  }
}

const shared = new WeakMap<OutboundPolicy, Map<Resolve, Promise<EgressProxy>>>();

/** The process's proxy for `policy` (one per policy and resolver), started on first use. */
export function egressProxy(policy: OutboundPolicy, resolve: Resolve = systemResolve): Promise<EgressProxy> {
  let byResolver = shared.get(policy);
  if (!byResolver) shared.set(policy, (byResolver = new Map()));
  let proxy = byResolver.get(resolve);
  if (!proxy) {
    proxy = EgressProxy.start(policy, resolve);
    byResolver.set(resolve, proxy);
    proxy.catch(() => byResolver.delete(resolve));
  }
  return proxy;
}
