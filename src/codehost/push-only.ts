// Code host `none`: the branch is pushed and no pull request is opened.
import type { CodeHost } from './types.ts';

export function createPushOnly(): CodeHost {
  return {
    kind: 'none',
    async findOpen() {
      return null;
    },
    async upsert() {
      return null;
    },
    async pullRequestState() {
      return null;
    },
  };
}
