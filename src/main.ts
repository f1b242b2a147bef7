// The `folio` command's entry (bin/folio.mjs imports it): the commands live in src/cli/.
import { run } from './cli/index.ts';

await run(process.argv);
