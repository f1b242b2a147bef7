// What the parsing worker runs (util/off-loop.ts loads this module on a worker thread). The main
// thread calls them through parsing.ts.
import { parsePage } from './checks/markdown.ts';
import { checkMdx } from './validate.ts';

export const tasks = { parsePage, checkMdx };
