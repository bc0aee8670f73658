/**
 * The dump format ids, in detection order (`auto`, detect from the content, is not one of them).
 * Declared apart from the readers so that the protocol's schemas, and the webview bundle through
 * them, name formats without bundling the readers (the pickled ones need node:fs). `DUMP_READERS`
 * (index.ts) must list a reader for exactly these ids in this order: its type is checked against
 * them, and test/core/dumps/registry.test.ts compares the two lists.
 */
export const DUMP_FORMATS = [
  'nemo-rl',
  'skyrl-capture',
  'prime-rl',
  'prime-rl-export',
  'turns',
  'episode-lab',
  'jsonl',
  'skyrl',
  'slime',
  'harbor',
  'skyrl-capture-zst',
] as const;

export type DumpFormat = (typeof DUMP_FORMATS)[number];
