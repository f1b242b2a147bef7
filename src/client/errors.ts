// The one error type the client throws for anything the server or the network did wrong.

export interface FolioErrorDetail {
  message: string;
  path?: string;
}

/** Codes the client uses when the failure did not come from an error body. */
export type ClientErrorCode =
  | 'network_error' // the request never got a response (connection refused, reset, DNS…)
  | 'timeout' // one attempt took longer than `timeoutMs`, or waitForJob ran out of time
  | 'invalid_response' // the server answered with something that is not the expected JSON
  | 'missing_project'; // no projectId on the client or on the call

export class FolioError extends Error {
  /** HTTP status; 0 when there was no HTTP response (network error, timeout, client-side check). */
  readonly status: number;
  /** Stable machine-readable code: the server's `code`, else one derived from the status, else a ClientErrorCode. */
  readonly code: string;
  readonly details: FolioErrorDetail[] | undefined;
  /** Seconds the server asked to wait (429/503 `Retry-After`), when given. */
  readonly retryAfter: number | undefined;
  /** The server's `x-request-id`, to quote when reporting a problem. */
  readonly requestId: string | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    opts: { details?: FolioErrorDetail[]; retryAfter?: number; requestId?: string; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'FolioError';
    this.status = status;
    this.code = code;
    this.details = opts.details;
    this.retryAfter = opts.retryAfter;
    this.requestId = opts.requestId;
  }
}

/** Code for an error response whose body has none (e.g. the upstream service's `{error, details}`). */
export function codeForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request';
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 409:
      return 'conflict';
    case 413:
      return 'payload_too_large';
    case 415:
      return 'unsupported_media_type';
    case 422:
      return 'unprocessable';
    case 429:
      return 'rate_limited';
    case 503:
      return 'unavailable';
    default:
      return `http_${status}`;
  }
}
