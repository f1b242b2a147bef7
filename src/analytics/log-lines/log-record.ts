// A log line's fields as the importer reads them, whatever the format (combined or JSON lines).

/** A parsed log line, before the document/status filters. */
export interface LogRecord {
  ts: number;
  ip: string;
  method: string;
  path: string;
  status: number;
  userAgent: string;
  referrer: string | null;
  accept: string | null;
}

/** A record to be reused from line to line (no allocation per line). */
export function emptyRecord(): LogRecord {
  return { ts: 0, ip: '', method: '', path: '', status: 0, userAgent: '', referrer: null, accept: null };
}
