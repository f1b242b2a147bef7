// Which requests of a log count as page views: successful ones, for documents rather than assets;
// and which are not-found views (404, 410 for documents).

const DOC_EXT = new Set(['html', 'htm', 'md', 'mdx']);

/** A page, not an asset: no file extension, .html/.md/.mdx, or llms.txt / llms-full.txt. */
export function isDocumentPath(path: string): boolean {
  const last = path.slice(path.lastIndexOf('/') + 1);
  if (/^llms(-full)?\.txt$/i.test(last)) return true;
  const dot = last.lastIndexOf('.');
  if (dot <= 0) return true;
  return DOC_EXT.has(last.slice(dot + 1).toLowerCase());
}

/** A request for a page that is not there: imported as a not-found view (never a page view). */
export function isNotFoundStatus(status: number): boolean {
  return status === 404 || status === 410;
}

export function isSuccess(status: number): boolean {
  return (status >= 200 && status < 300) || status === 304;
}
