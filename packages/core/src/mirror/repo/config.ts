import { LAYOUTS } from '../layout.js';
import type { Layout } from '../mirror.js';
import { entitygitValue, withFormat } from './format.js';

/** git's core section: a repository git reads as an ordinary one with a working tree. */
export const CORE_CONFIG = `[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n`;
/** The config section recording a repository's layout. */
export const layoutSection = (layout: Layout) => `[entitygit]\n\tlayout = ${layout}\n`;
/** A new repository's config: git's core settings, the layout and today's format. */
export const repoConfig = (layout: Layout) => withFormat(CORE_CONFIG + layoutSection(layout));

/** The layout a config records (`[entitygit] layout = …`), or null. */
export function configuredLayout(text: string | null): Layout | null {
  return entitygitValue(text, /^\s*layout\s*=\s*(\S+)\s*$/i, (v) => (LAYOUTS as string[]).includes(v)) as Layout | null;
}

/** Whether git can read a config file: present, no NUL byte, and a [core] section. */
export function configReadable(text: string | null): boolean {
  return text !== null && !text.includes('\0') && /^\s*\[core\]/m.test(text);
}
