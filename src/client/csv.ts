// CSV as Folio writes it, for the CLI and the dashboard alike: RFC 4180 (fields with a comma, quote
// or line break quoted, quotes doubled, CRLF line ends), and a cell that a spreadsheet would run as a
// formula (starting with =, +, -, @, tab or CR) is prefixed with ' — paths come from visitors.

function cell(v: string | number): string {
  if (typeof v === 'number') return String(v);
  const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function toCsv(header: string[], rows: (string | number)[][]): string {
  return [header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}
