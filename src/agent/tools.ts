// The agent's tools, with exactly these names: list_files, read_file, search, write_file, edit_file,
// delete_file, move_file, finish. Every tool returns text to the model; bad input and refused paths
// come back as "Error: …" results, never as exceptions.
import { promises as fs } from 'node:fs';
import { tool, type ToolSet } from 'ai';
import { z } from 'zod';
import { clip, WorkspaceError, type Workspace } from './workspace.ts';
import { compileUntrusted, PatternError, type UntrustedPattern } from '../util/untrusted-pattern.ts';

export interface FinishState {
  finished: { title: string; summary: string } | null;
}

function errorText(err: unknown): string {
  if (err instanceof WorkspaceError) return `Error: ${err.message}`;
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'EACCES' || code === 'EPERM') return 'Error: permission denied.';
  if (code === 'EISDIR') return 'Error: that path is a directory.';
  if (code === 'ENOENT') return 'Error: no such file or directory.';
  return `Error: ${(err as Error)?.message ?? String(err)}`;
}

async function guardRaw(fn: () => Promise<string>, maxChars: number, ready?: Promise<unknown>): Promise<string> {
  try {
    if (ready) await ready;
    return clip(await fn(), maxChars);
  } catch (err) {
    return errorText(err);
  }
}

/** Notes for the paths a tool call names (the nested instructions of their folders), after its result. */
export type PathNotes = (path: string) => Promise<string | null>;

async function withNotes(result: string, paths: unknown[], notes: PathNotes | undefined): Promise<string> {
  if (!notes || result.startsWith('Error:')) return result;
  const added: string[] = [];
  for (const p of paths) {
    const note = typeof p === 'string' ? await notes(p).catch(() => null) : null;
    if (note) added.push(note);
  }
  return added.length === 0 ? result : [result, ...added].join('\n\n');
}

// ---------------------------------------------------------------- implementations (also used by tests)

export async function listFiles(ws: Workspace, input: { path?: string; glob?: string }): Promise<string> {
  const { files, truncated } = await ws.listFiles(input.path ?? '.', { glob: input.glob });
  if (files.length === 0) return input.glob ? `No files match "${input.glob}".` : 'No files.';
  return files.join('\n') + (truncated ? `\n… [more files not listed: narrow with path or glob]` : '');
}

export async function readFile(
  ws: Workspace,
  input: { path: string; start_line?: number; end_line?: number },
): Promise<string> {
  const text = await ws.readText(input.path);
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const total = lines.length;
  const start = Math.max(1, input.start_line ?? 1);
  const end = Math.min(total, input.end_line ?? total);
  if (text === '') return `(${input.path} is empty)`;
  if (start > total) throw new WorkspaceError(`start_line ${start} is past the end of "${input.path}" (${total} lines).`);
  if (end < start) throw new WorkspaceError(`end_line ${end} is before start_line ${start}.`);
  const width = String(end).length;
  const body = lines
    .slice(start - 1, end)
    .map((l, i) => `${String(start + i).padStart(width)}\t${l}`)
    .join('\n');
  const header = `${input.path} (lines ${start}-${end} of ${total}; the number and tab before each line are not part of the file)`;
  const full = `${header}\n${body}`;
  if (full.length > ws.limits.maxOutputChars) {
    return `${clip(full, ws.limits.maxOutputChars)}\nUse start_line and end_line to read the rest.`;
  }
  return full;
}

/** Bytes one search call reads at most: matching is linear (RE2), so this bounds the call's time. */
const MAX_SEARCH_BYTES = 64 * 1024 * 1024;

export async function searchFiles(
  ws: Workspace,
  input: { pattern: string; glob?: string; path?: string; ignore_case?: boolean },
): Promise<string> {
  let re: UntrustedPattern;
  try {
    re = compileUntrusted(input.pattern, { ignoreCase: input.ignore_case });
  } catch (err) {
    if (err instanceof PatternError) throw new WorkspaceError(err.message);
    throw err;
  }
  const { files } = await ws.listFiles(input.path ?? '.', { glob: input.glob, limit: Number.MAX_SAFE_INTEGER });
  const out: string[] = [];
  let truncated = false;
  let scanned = 0;
  let stoppedAt: string | null = null;
  for (const rel of files) {
    if (out.length >= ws.limits.maxSearchMatches) {
      truncated = true;
      break;
    }
    const abs = await ws.resolve(rel).catch(() => null);
    if (!abs) continue;
    const st = await fs.stat(abs).catch(() => null);
    if (!st || !st.isFile() || st.size > ws.limits.maxReadBytes) continue;
    // Each file costs time linear in its size (RE2); the whole call is bounded too.
    if (scanned + st.size > MAX_SEARCH_BYTES) {
      stoppedAt = rel;
      break;
    }
    scanned += st.size;
    const buf = await fs.readFile(abs);
    if (buf.includes(0)) continue;
    const lines = buf.toString('utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (re.test(lines[i])) {
        out.push(`${rel}:${i + 1}: ${lines[i].length > 300 ? lines[i].slice(0, 300) + '…' : lines[i]}`);
        if (out.length >= ws.limits.maxSearchMatches) {
          truncated = i < lines.length - 1 || rel !== files[files.length - 1];
          break;
        }
      }
    }
  }
  const stopped = stoppedAt ? `\n… [stopped before ${stoppedAt}: searched ${MAX_SEARCH_BYTES / 1024 / 1024} MB; narrow with path or glob]` : '';
  if (out.length === 0) return `No matches for /${input.pattern}/.${stopped}`;
  return out.join('\n') + (truncated ? `\n… [stopped at ${ws.limits.maxSearchMatches} matches: narrow the pattern or glob]` : '') + stopped;
}

export async function writeFile(ws: Workspace, input: { path: string; content: string }): Promise<string> {
  const { created } = await ws.writeText(input.path, input.content);
  return `${created ? 'Created' : 'Overwrote'} ${input.path} (${Buffer.byteLength(input.content, 'utf8')} bytes).`;
}

export async function editFile(
  ws: Workspace,
  input: { path: string; old_string: string; new_string: string; replace_all?: boolean },
): Promise<string> {
  if (typeof input.old_string !== 'string' || input.old_string === '') {
    throw new WorkspaceError('old_string must not be empty; use write_file to create a file.');
  }
  if (input.old_string === input.new_string) throw new WorkspaceError('old_string and new_string are the same: nothing to change.');
  const text = await ws.readText(input.path);
  let count = 0;
  for (let i = text.indexOf(input.old_string); i !== -1; i = text.indexOf(input.old_string, i + input.old_string.length)) {
    count++;
  }
  if (count === 0) {
    throw new WorkspaceError(
      `old_string was not found in "${input.path}". It must match the file exactly, including whitespace and line breaks; read the file again and copy the text.`,
    );
  }
  if (count > 1 && !input.replace_all) {
    throw new WorkspaceError(
      `old_string occurs ${count} times in "${input.path}". Include more surrounding text so it matches exactly once, or set replace_all to true.`,
    );
  }
  const next = input.replace_all
    ? text.split(input.old_string).join(input.new_string)
    : text.replace(input.old_string, () => input.new_string);
  await ws.writeText(input.path, next);
  return `Edited ${input.path}: replaced ${count} occurrence${count === 1 ? '' : 's'}.`;
}

export async function deleteFile(ws: Workspace, input: { path: string }): Promise<string> {
  await ws.remove(input.path);
  return `Deleted ${input.path}.`;
}

export async function moveFile(ws: Workspace, input: { from: string; to: string }): Promise<string> {
  await ws.move(input.from, input.to);
  return `Moved ${input.from} to ${input.to}.`;
}

// ---------------------------------------------------------------- the tool set

/**
 * `ready` (optional) is awaited before any tool runs: the worktree may still be checking out. `notes`
 * (optional) adds text after a successful result of a call on a file (its folder's instructions).
 */
export function createTools(ws: Workspace, state: FinishState, ready?: Promise<unknown>, notes?: PathNotes): ToolSet {
  const max = ws.limits.maxOutputChars;
  /** A tool that runs `run` on the workspace: after `ready`, its result clipped, its errors as text; then the notes of the paths it names. */
  const workspaceTool = <S extends z.ZodType<object>>(
    description: string,
    inputSchema: S,
    run: (ws: Workspace, input: z.infer<S>) => Promise<string>,
    maxChars = max,
  ) =>
    tool({
      description,
      inputSchema,
      execute: async (input: z.infer<S>) => {
        const result = await guardRaw(() => run(ws, input), maxChars, ready);
        const i = input as { path?: unknown; from?: unknown; to?: unknown };
        return withNotes(result, run === listFiles || run === searchFiles ? [] : [i.path, i.from, i.to], notes);
      },
    });
  return {
    list_files: workspaceTool(
      'List files in the repository (recursive, sorted; skips .git and node_modules). Optional folder `path` and a glob such as "**/*.mdx".',
      z.object({
        path: z.string().optional().describe('Folder relative to the repository root; default the root.'),
        glob: z.string().optional().describe('Glob filter, e.g. "docs/**/*.md" or "*.json".'),
      }),
      listFiles,
    ),
    read_file: workspaceTool(
      'Read a text file, with line numbers. Use start_line/end_line (1-based, inclusive) for large files; long output is clipped.',
      z.object({
        path: z.string(),
        start_line: z.number().int().min(1).optional(),
        end_line: z.number().int().min(1).optional(),
      }),
      readFile,
      max + 200,
    ),
    search: workspaceTool(
      'Search file contents with a regular expression in RE2 syntax (like JavaScript\'s, without backreferences or lookaround). Returns path:line: text. Optional glob filter.',
      z.object({
        pattern: z.string().min(1),
        glob: z.string().optional(),
        path: z.string().optional(),
        ignore_case: z.boolean().optional(),
      }),
      searchFiles,
    ),
    write_file: workspaceTool('Create a file or replace its whole content. Creates missing folders.', z.object({ path: z.string(), content: z.string() }), writeFile),
    edit_file: workspaceTool(
      'Replace an exact string in a file. old_string must match exactly once (including whitespace) unless replace_all is true.',
      z.object({
        path: z.string(),
        old_string: z.string(),
        new_string: z.string(),
        replace_all: z.boolean().optional(),
      }),
      editFile,
    ),
    delete_file: workspaceTool('Delete a file.', z.object({ path: z.string() }), deleteFile),
    move_file: workspaceTool('Move or rename a file. The destination must not exist.', z.object({ from: z.string(), to: z.string() }), moveFile),
    finish: tool({
      description:
        'End your turn. `title` is a short pull-request title (under 72 characters); `summary` explains what you changed and why (or why nothing needed changing).',
      inputSchema: z.object({ title: z.string().min(1).max(200), summary: z.string().min(1).max(20_000) }),
      execute: async (input) => {
        if (ready) await ready.catch(() => undefined);
        state.finished = { title: input.title.trim(), summary: input.summary.trim() };
        return 'Turn finished.';
      },
    }),
  };
}
