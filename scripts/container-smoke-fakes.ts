// The outside world of scripts/container-smoke.sh, in a container of its own on the smoke network
// (the image has node and git; the repository is mounted read-only): a code host (git smart HTTP +
// the GitHub API, from test/fixtures) with one docs repository, and a fake Chat Completions server
// whose script edits a page and finishes, in every job. Both listen on `host` (the container's
// address). Prints one JSON line with their addresses, then serves until it gets SIGTERM.
import { startCodeHost } from '../test/fixtures/git-server.ts';
import { startFakeOpenAI, toolCall } from '../test/fixtures/fake-openai.ts';

const token = process.argv[2] ?? 'smoke-token-0123456789';
const address = process.argv[3] ?? '127.0.0.1';
const host = await startCodeHost({ token, host: address });
const repositoryUrl = host.createRepo('acme/docs', {
  'docs.json': JSON.stringify({ name: 'Acme', navigation: [{ group: 'Start', pages: ['index'] }] }, null, 2) + '\n',
  'index.mdx': '---\ntitle: Home\ndescription: Start here\n---\n\n# Acme CLI\n\nRun `acme build`.\n',
});
// Every job reads the page, edits it and finishes, so each one pushes, runs the checks (the site's
// build among them) and opens a pull request: a job's requests carry its own earlier tool results.
const script = [
  toolCall('read_file', { path: 'index.mdx' }),
  toolCall('edit_file', { path: 'index.mdx', old_string: 'Run `acme build`.', new_string: 'Run `acme build`.\n\nUse `--dry-run` to preview.' }),
  toolCall('finish', { title: 'Document --dry-run', summary: 'Added the --dry-run flag.' }),
];
const llm = await startFakeOpenAI((req) => script[Math.min(req.messages.filter((m) => m.role === 'tool').length, script.length - 1)]!, address);
console.log(JSON.stringify({ origin: host.origin, repositoryUrl, llm: llm.baseUrl }));
process.on('SIGTERM', async () => {
  await llm.close();
  await host.close();
  process.exit(0);
});
