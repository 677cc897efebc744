/** Ids that must never escape a root, collide, or break a ref name (DESIGN.md §3). */
export const HOSTILE_IDS: readonly string[] = [
  '..', '../..', '.', '.git', '.GIT', 'a/b', '/abs', 'a\\b', 'nul\u0000byte', 'x.lock', 'CON', 'trailing.', 'a..b', '@{1}',
  'sp ace', 'tab\t', 'new\nline', 'caf\u00e9', 'cafe\u0301', 'Case', 'case', 'x'.repeat(300), '💥'.repeat(80), '%41', 'a+b', '-',
];
