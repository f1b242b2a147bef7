// Runs Folio (or a fixture) as a real child process.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');

export interface Child {
  proc: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * Starts `script` with Node 24 and waits for the line {"url": …} on stdout. The wait allows for a
 * loaded 2-core machine (the whole suite beside it): a server alone prints that line in 3–7 s.
 */
export function startProcess(script: string, args: string[], env: Record<string, string>, timeoutMs = 40_000): Promise<Child> {
  const proc = spawn(process.execPath, [path.resolve(ROOT, script), ...args], { env: { ...process.env, ...env }, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL'); // never leave a half-started server behind
      reject(new Error(`process did not start: ${out}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /\{"url":"([^"]+)"\}/.exec(out) ?? /"url":"(http[^"]+)"[^\n]*"msg":"Folio is listening"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, url: m[1], output: () => out, exited });
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`process exited with ${code} before listening: ${out}`));
    });
  });
}

/** Runs the folio CLI to completion. */
export function runCli(args: string[], env: Record<string, string>, input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [path.join(ROOT, 'bin/folio.mjs'), ...args], { env: { ...process.env, ...env }, cwd: ROOT });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => (stdout += d));
    proc.stderr.on('data', (d) => (stderr += d));
    if (input !== undefined) proc.stdin.end(input);
    else proc.stdin.end();
    proc.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
