// Fastify gives every request a child logger bound to its id. Making a pino child runs the
// redaction setup and serialises the bindings, which costs more than serving a cached job; most
// requests never log. This logger makes the child on first use.
// Kept for `GET job`: docs/benchmarks.md, "Performance shortcuts kept".
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString, LogFn } from 'pino';

class LazyChildLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  get #log(): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings, this.#options));
  }

  get level(): LevelWithSilentOrString {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }
  set level(level: LevelWithSilentOrString) {
    this.#log.level = level;
  }
  readonly fatal: LogFn = (...args: Parameters<LogFn>) => this.#log.fatal(...args);
  readonly error: LogFn = (...args: Parameters<LogFn>) => this.#log.error(...args);
  readonly warn: LogFn = (...args: Parameters<LogFn>) => this.#log.warn(...args);
  readonly info: LogFn = (...args: Parameters<LogFn>) => this.#log.info(...args);
  readonly debug: LogFn = (...args: Parameters<LogFn>) => this.#log.debug(...args);
  readonly trace: LogFn = (...args: Parameters<LogFn>) => this.#log.trace(...args);
  readonly silent: LogFn = () => {};
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#log.child(bindings, options);
  }
}

/** Fastify's childLoggerFactory: the request's logger, made when something first logs. */
export function lazyChildLogger(this: unknown, parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(parent, bindings, options) as unknown as FastifyBaseLogger;
}
