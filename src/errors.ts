// The one error shape of the API: { error, code, details? }. Services throw ApiError; the HTTP layer renders it.
// Codes are stable and documented in docs/errors.md.
export interface ErrorDetail {
  message: string;
  path?: string;
}

export interface ErrorBody {
  error: string;
  code: string;
  details?: ErrorDetail[];
}

/**
 * The base of Folio's own errors: a stable machine `code` (docs/errors.md) and one clear sentence.
 * Each layer throws its kind (GitError, ProjectInputError, JobFailure…); the HTTP layer answers
 * with ApiError. (src/agent/ has its own errors: it imports nothing of Folio.)
 */
export class CodedError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

export class ApiError extends CodedError {
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, opts: { details?: ErrorDetail[]; headers?: Record<string, string> } = {}) {
    super(code, message);
    this.status = status;
    this.details = opts.details;
    this.headers = opts.headers ?? {};
  }

  toBody(): ErrorBody {
    return this.details ? { error: this.message, code: this.code, details: this.details } : { error: this.message, code: this.code };
  }
}

export const badRequest = (code: string, message: string, details?: ErrorDetail[]) => new ApiError(400, code, message, { details });
export const notFound = (message: string, code = 'not_found') => new ApiError(404, code, message);
export const conflict = (code: string, message: string) => new ApiError(409, code, message);
export const forbidden = (code: string, message: string) => new ApiError(403, code, message);
export const unauthorized = (code: string, message: string) =>
  new ApiError(401, code, message, { headers: { 'www-authenticate': 'Bearer realm="folio"' } });

/** RateLimit-* headers (IETF draft) for a response that counted against a limit. */
export function rateLimitHeaders(info: { limit: number; remaining: number; resetSeconds: number }): Record<string, string> {
  return {
    'ratelimit-limit': String(info.limit),
    'ratelimit-remaining': String(info.remaining),
    'ratelimit-reset': String(info.resetSeconds),
  };
}

export const tooManyRequests = (message: string, info: { limit: number; remaining: number; resetSeconds: number }) =>
  new ApiError(429, 'rate_limited', message, {
    headers: { 'retry-after': String(Math.max(1, info.resetSeconds)), ...rateLimitHeaders(info) },
  });
