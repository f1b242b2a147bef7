// What parsing runs on the off-loop pool's threads (util/off-loop.ts loads this module). The main
// thread calls them through parsing.ts.
import { parsePage } from './checks/markdown.ts';
import { checkMdx } from './validate.ts';

export const tasks = { parsePage, checkMdx };
