// The outside world of scripts/container-smoke.sh, run on the host (not in the image): a code host
// (git smart HTTP + the GitHub API, from test/fixtures) with one docs repository, and a fake Chat
// Completions server whose script edits a page and finishes. Prints one JSON line with their
// addresses, then serves until it gets SIGTERM.
import { startCodeHost } from '../test/fixtures/git-server.ts';
import { sequence, startFakeOpenAI, toolCall } from '../test/fixtures/fake-openai.ts';

const token = process.argv[2] ?? 'smoke-token-0123456789';
const host = await startCodeHost({ token });
const repositoryUrl = host.createRepo('acme/docs', {
  'docs.json': JSON.stringify({ name: 'Acme', navigation: [{ group: 'Start', pages: ['index'] }] }, null, 2) + '\n',
  'index.mdx': '---\ntitle: Home\ndescription: Start here\n---\n\n# Acme CLI\n\nRun `acme build`.\n',
});
const llm = await startFakeOpenAI(
  sequence([
    toolCall('read_file', { path: 'index.mdx' }),
    toolCall('edit_file', { path: 'index.mdx', old_string: 'Run `acme build`.', new_string: 'Run `acme build`.\n\nUse `--dry-run` to preview.' }),
    toolCall('finish', { title: 'Document --dry-run', summary: 'Added the --dry-run flag.' }),
  ]),
);
console.log(JSON.stringify({ origin: host.origin, repositoryUrl, llm: llm.baseUrl }));
process.on('SIGTERM', async () => {
  await llm.close();
  await host.close();
  process.exit(0);
});
