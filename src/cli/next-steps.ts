// What `folio serve` and `folio worker` log once they run, for whoever started them: where the
// dashboard is (and, while no owner exists, the setup link that creates one), which model provider
// jobs use, and where the data lives. URLs of stores are shown without credentials, query or
// fragment; the one secret shown is the setup token, in its link, and only until the owner exists.
import type { Config } from '../config.ts';
import { modelConfigError } from '../agent/models.ts';

export interface StartupLine {
  level: 'info' | 'warn';
  msg: string;
  /** The same facts as log fields, for machines. */
  fields: Record<string, unknown>;
}

/** A URL without its user, password, query and fragment: where a service is, never how to sign in. */
export function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

type Provider = 'anthropic' | 'openai' | 'openai-compatible';

/** The variable that configures each provider (config.ts reads them), and whether it is set. */
function providers(models: Config['models']): { provider: Provider; variable: string; set: boolean }[] {
  return [
    { provider: 'anthropic', variable: 'ANTHROPIC_API_KEY', set: models.anthropic.apiKey !== null },
    { provider: 'openai', variable: 'OPENAI_API_KEY', set: models.openai.apiKey !== null },
    { provider: 'openai-compatible', variable: 'OPENAI_COMPATIBLE_BASE_URL', set: models.openaiCompatible.baseUrl !== null },
  ];
}

/** The default model and whether its provider is configured; if not, which variable would do it. */
function modelLine(models: Config['models']): StartupLine {
  const model = models.defaultModel;
  const all = providers(models);
  const own = all.find((p) => model.startsWith(`${p.provider}/`))!;
  if (modelConfigError(models, model) === null) {
    const where = own.provider === 'openai-compatible' ? `: ${withoutCredentials(models.openaiCompatible.baseUrl!)}` : '';
    return { level: 'info', msg: `Model: ${model} (${own.variable} is set${where})`, fields: { model, provider: own.provider } };
  }
  const others = all.filter((p) => p !== own);
  const configured = others.filter((p) => p.set);
  if (configured.length === 0) {
    return {
      level: 'warn',
      msg: `No model provider is configured: set ${own.variable} for ${model}, or FOLIO_MODEL and ${others.map((p) => p.variable).join(' or ')}. Jobs are refused until then.`,
      fields: { model, provider: null },
    };
  }
  const instead = configured.map((p) => `${p.variable} is, for ${p.provider}/… models`).join('; ');
  return {
    level: 'warn',
    msg: `Model: ${model} needs ${own.variable}, which is not set (${instead}: set FOLIO_MODEL). Jobs on it are refused until then.`,
    fields: { model, provider: null },
  };
}

/** The data directory and what it holds, and the stores that live elsewhere (by URL without credentials). */
function dataLine(config: Config, analytics: boolean): StartupLine {
  const inside: string[] = [];
  const elsewhere: string[] = [];
  const database = config.databaseUrl ? withoutCredentials(config.databaseUrl) : null;
  const clickhouse = analytics && config.clickhouseUrl ? withoutCredentials(config.clickhouseUrl) : null;
  if (database) elsewhere.push(`state in PostgreSQL at ${database}`);
  else inside.push('state in SQLite');
  if (clickhouse) elsewhere.push(`analytics in ClickHouse at ${clickhouse}`);
  else if (analytics) inside.push('analytics in DuckDB');
  inside.push('repository mirrors');
  return {
    level: 'info',
    msg: [`Data: ${config.dataDir} (${inside.join(', ')})`, ...elsewhere].join('; '),
    fields: { dataDir: config.dataDir, database, clickhouse },
  };
}

/**
 * The setup page with the setup token in the fragment: a browser never sends a fragment, so the
 * token reaches no access log (Folio's or a proxy's) and no Referer; the page reads it from there.
 */
export function setupLink(dashboard: string, token: string): string {
  return `${dashboard}setup#token=${encodeURIComponent(token)}`;
}

/**
 * The lines to log after starting. With `listenUrl` (serve): the dashboard's address — the public
 * one when FOLIO_PUBLIC_URL is set — and, while no owner exists, the setup link holding the setup
 * token. Without (worker): only the model and the data, which is what a worker uses.
 */
export function startupLines(config: Config, opts: { listenUrl?: string; setupRequired?: boolean }): StartupLine[] {
  const lines: StartupLine[] = [];
  if (opts.listenUrl !== undefined) {
    const url = `${config.publicUrl ?? opts.listenUrl}/`;
    lines.push({ level: 'info', msg: `Dashboard: ${url}`, fields: { dashboard: url, setupRequired: !!opts.setupRequired } });
    if (opts.setupRequired) {
      const link = setupLink(url, config.setupToken);
      lines.push({ level: 'info', msg: `Create the owner account: ${link} (the link holds the setup token: keep it private until the owner exists)`, fields: { setupUrl: link } });
    }
  }
  lines.push(modelLine(config.models), dataLine(config, opts.listenUrl !== undefined));
  return lines;
}
