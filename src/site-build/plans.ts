// Which build a site gets: the project's own commands when it set them, else its framework's own
// check — MkDocs `mkdocs build --strict` (the system's mkdocs), Mintlify `mint broken-links` (the
// CLI in the tool cache, installed once by scripts/install-build-tools.sh), Docusaurus
// `docusaurus build` (after `npm ci`, which needs the registries) — or none. A build that cannot
// run here is skipped with one sentence saying why.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { DocsProfile } from '../agent/prompts.ts';
import type { SandboxTool } from '../sandbox/index.ts';

/** A project's build settings (store/projects.ts). */
export interface BuildSettings {
  enabled: boolean;
  setup: string | null;
  command: string | null;
  timeoutSeconds: number | null;
}

/** What runs, where in the repository, and what it needs. */
export interface BuildPlan {
  tool: 'mkdocs' | 'mint' | 'docusaurus' | 'custom';
  /** Folder of the repository the commands run in ('' for the root). */
  cwd: string;
  setup: string | null;
  command: string;
  tools: SandboxTool[];
  /** Files whose contents decide the setup's result (the setup cache's key). */
  lockfiles: string[];
}

/** A build that cannot run here, and the sentence saying why. */
export interface SkippedBuild {
  tool: string;
  command: string;
  skip: string;
}

/** The Mintlify CLI's folder in the tool cache and the version scripts/install-build-tools.sh pins. */
export const MINT_TOOL = 'mint';

const LOCKFILES = ['package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml', 'requirements.txt', 'poetry.lock', 'Pipfile.lock', 'Gemfile.lock', 'package.json'];

/** The lockfiles a folder of the repository has. */
async function lockfilesIn(dir: string, has: (p: string) => Promise<boolean>): Promise<string[]> {
  const out: string[] = [];
  for (const f of LOCKFILES) if (await has(dir ? `${dir}/${f}` : f)) out.push(dir ? `${dir}/${f}` : f);
  return out;
}

/** A program on the system paths the sandbox sees. */
function onSystem(name: string): boolean {
  return ['/usr/local/bin', '/usr/bin', '/bin'].some((d) => existsSync(path.join(d, name)));
}

/** How a missing tool gets into Folio's image: a word of the Containerfile's build argument. */
const inTheImage = (word: string) => `in Folio's image, add ${word} to the build argument FOLIO_BUILD_TOOLS (docs/deployment.md)`;

/** `s` as one word of a shell command line. */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The build of a site, or the sentence saying why it does not run here; null when the site has no
 * build to run (a framework without one and no command of the project's).
 */
export async function planBuild(
  profile: DocsProfile,
  settings: BuildSettings,
  here: { toolsDir: string; setupNetwork: boolean },
  has: (p: string) => Promise<boolean>,
): Promise<BuildPlan | SkippedBuild | null> {
  if (settings.command) {
    return { tool: 'custom', cwd: '', setup: settings.setup, command: settings.command, tools: [], lockfiles: await lockfilesIn('', has) };
  }
  const configDir = profile.configFile ? path.posix.dirname(profile.configFile).replace(/^\.$/, '') : '';
  const lockfiles = await lockfilesIn(configDir, has);
  const toolsDir = here.toolsDir;
  switch (profile.framework) {
    case 'mkdocs': {
      const config = profile.configFile ? path.posix.basename(profile.configFile) : 'mkdocs.yml';
      const command = `mkdocs build --strict --config-file ${shellQuote(config)} --site-dir "$TMPDIR/folio-site"`;
      if (!onSystem('mkdocs')) {
        return { skip: `MkDocs is not installed on this server, so the site build did not run: install the Debian package mkdocs (and the site's plugins), or, ${inTheImage('mkdocs')}.`, tool: 'mkdocs', command };
      }
      return { tool: 'mkdocs', cwd: configDir, setup: settings.setup, command, tools: [], lockfiles };
    }
    case 'mintlify': {
      const command = 'mint broken-links';
      const dir = path.join(toolsDir, MINT_TOOL);
      if (!existsSync(path.join(dir, 'node_modules/.bin/mint'))) {
        return { skip: `The Mintlify CLI is not in the build tool cache (${dir}), so the site build did not run: run scripts/install-build-tools.sh, or, ${inTheImage('mint')}.`, tool: 'mint', command };
      }
      return { tool: 'mint', cwd: configDir, setup: settings.setup, command, tools: [{ name: MINT_TOOL, dir, bin: 'node_modules/.bin' }], lockfiles };
    }
    case 'docusaurus': {
      const command = 'npx --no-install docusaurus build --out-dir "$TMPDIR/folio-site"';
      const setup = settings.setup ?? (lockfiles.some((f) => f.endsWith('package-lock.json')) ? 'npm ci --no-audit --no-fund' : 'npm install --no-audit --no-fund');
      if (!settings.setup && !here.setupNetwork) {
        return { skip: "Docusaurus needs the site's npm packages and the setup step may not reach the registries (FOLIO_BUILD_SETUP_NETWORK is off), so the site build did not run.", tool: 'docusaurus', command };
      }
      return { tool: 'docusaurus', cwd: configDir, setup, command, tools: [], lockfiles };
    }
    default:
      return null;
  }
}
