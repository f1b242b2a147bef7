// The one table from the codes domain errors carry (CodedError, docs/errors.md) to HTTP statuses,
// and the one place a domain error becomes an HTTP answer. Domain code never picks a status.
import { ApiError, CodedError, rateLimitHeaders, type ApiErrorCode } from '../errors.ts';

/** A status an error answers with. */
type ErrorStatus = 400 | 401 | 402 | 403 | 404 | 409 | 413 | 422 | 429 | 502 | 503;

/** Every code of ApiErrorCode (src/errors.ts) with its status: a code without one does not compile. */
export const HTTP_STATUS: { readonly [C in ApiErrorCode]: ErrorStatus } = {
  // 400: the request, as sent, cannot be done
  invalid_request: 400,
  invalid_cursor: 400,
  invalid_date: 400,
  invalid_date_range: 400,
  invalid_log: 400,
  invalid_project: 400,
  invalid_status: 400,
  invalid_trigger_settings: 400,
  invalid_user: 400,
  invalid_payload: 400,
  model_not_allowed: 400,
  model_not_configured: 400,
  model_not_priced: 400,
  // a rejected analytics record (analytics/pipeline.ts, Rejected)
  field_too_long: 400,
  future_timestamp: 400,
  invalid_event: 400,
  invalid_field: 400,
  invalid_ip: 400,
  invalid_json: 400,
  invalid_key: 400,
  invalid_path: 400,
  invalid_timestamp: 400,
  invalid_user_agent: 400,
  invalid_visitor_id: 400,
  missing_field: 400,
  missing_identity: 400,
  unknown_field: 400,
  unknown_company: 400,
  // 401: a signature that does not check out
  invalid_signature: 401,
  // 402: the project's monthly budget is spent (jobs/budget.ts); not retried, it resets on the 1st (UTC)
  monthly_budget_exceeded: 402,
  // 403: not allowed without what only the operator has
  invalid_setup_token: 403,
  // 404: nothing there (or not for this caller)
  project_not_found: 404,
  job_not_found: 404,
  doc_not_found: 404,
  key_not_found: 404,
  suggestion_not_found: 404,
  triggers_not_configured: 404,
  // 409: the state does not allow it
  job_archived: 409,
  already_set_up: 409,
  suggestion_in_progress: 409,
  impact_not_ready: 409,
  // 413: too large
  line_too_long: 413,
  payload_too_large: 413,
  // 422: the same idempotency key with another request
  idempotency_key_reused: 422,
  // 422: a project's repository answered no when it was saved (admin/repository-check.ts)
  repository_not_found: 422,
  repository_auth_failed: 422,
  repository_redirected: 422,
  repository_address_refused: 422,
  repository_protocol_refused: 422,
  branch_not_found: 422,
  // 429: a limit; try again later
  rate_limited: 429,
  too_many_imports: 429,
  too_many_streams: 429,
  // 502, 503: a code host, or a secret this server cannot open
  code_host_error: 502,
  trigger_secret_unavailable: 503,
  job_pages_unavailable: 503,
};

/** The HTTP answer for a domain error whose code is in the table; null for any other error. */
export function httpErrorOf(err: unknown): ApiError | null {
  if (!(err instanceof CodedError) || err instanceof ApiError) return null;
  if (!Object.hasOwn(HTTP_STATUS, err.code)) return null;
  const status = HTTP_STATUS[err.code as ApiErrorCode];
  const { details, retryAfterSeconds, rateLimit } = err.hints;
  const headers: Record<string, string> = {
    ...(retryAfterSeconds !== undefined ? { 'retry-after': String(retryAfterSeconds) } : {}),
    ...(rateLimit ? rateLimitHeaders(rateLimit) : {}),
  };
  return new ApiError(status, err.code, err.message, { details, headers });
}
