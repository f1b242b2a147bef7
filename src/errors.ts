// The one error shape of the API: { error, code, details? }. Domain code throws CodedError; the HTTP
// layer maps its code to a status (src/http/error-status.ts) and renders ApiError.
// Codes are stable and documented in docs/errors.md. The body's shape is its schema's (contracts/common.ts).
import type { ErrorBody } from './contracts/common.ts';

export type { ErrorBody };
export type ErrorDetail = NonNullable<ErrorBody['details']>[number];

/** What a caller may act on besides the sentence: which inputs were wrong, when to try again. */
export interface ErrorHints {
  details?: ErrorDetail[];
  /** Seconds after which the same request may succeed (a limit that frees up). */
  retryAfterSeconds?: number;
  /** The limit that was hit, when it is a rate limit. */
  rateLimit?: { limit: number; remaining: number; resetSeconds: number };
}

/**
 * The codes a domain error may answer a client with (docs/errors.md). src/http/error-status.ts gives
 * each its status, and a code here without one does not compile; an error with any other code is a
 * 500 that reveals nothing.
 */
export type ApiErrorCode =
  | 'invalid_request' | 'invalid_cursor' | 'invalid_date' | 'invalid_date_range' | 'invalid_log' | 'invalid_project'
  | 'invalid_status' | 'invalid_trigger_settings' | 'invalid_user' | 'model_not_allowed' | 'model_not_configured'
  | 'invalid_payload' | 'model_not_priced' | 'unknown_company'
  | 'monthly_budget_exceeded'
  // a rejected analytics record (analytics/pipeline.ts, Rejected)
  | 'field_too_long' | 'future_timestamp' | 'invalid_event' | 'invalid_field' | 'invalid_ip' | 'invalid_json' | 'invalid_key'
  | 'invalid_path' | 'invalid_timestamp' | 'invalid_user_agent' | 'invalid_visitor_id' | 'missing_field' | 'missing_identity' | 'unknown_field'
  | 'invalid_signature' | 'invalid_setup_token'
  | 'project_not_found' | 'job_not_found' | 'key_not_found' | 'suggestion_not_found' | 'doc_not_found' | 'triggers_not_configured'
  | 'job_archived' | 'already_set_up' | 'suggestion_in_progress' | 'impact_not_ready'
  | 'repository_not_found' | 'repository_auth_failed' | 'repository_redirected' | 'repository_address_refused' | 'repository_protocol_refused' | 'branch_not_found'
  | 'line_too_long' | 'payload_too_large'
  | 'idempotency_key_reused'
  | 'rate_limited' | 'too_many_imports' | 'too_many_streams'
  | 'code_host_error' | 'trigger_secret_unavailable' | 'job_pages_unavailable';

/**
 * The base of Folio's own errors: a stable machine `code` (docs/errors.md), one clear sentence and
 * optional hints. Domain code throws these (GitError, ProjectInputError, JobFailure…, or a plain
 * CodedError) and never an HTTP error: the HTTP layer maps codes to statuses in one table
 * (src/http/error-status.ts). The agent's own errors (src/agent/) are plain Errors with a `code`.
 */
export class CodedError extends Error {
  readonly code: string;
  readonly hints: ErrorHints;
  constructor(code: string, message: string, hints: ErrorHints = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.hints = hints;
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
