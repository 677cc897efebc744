import { LAYOUTS } from './layout.js';
import type { Layout } from './mirror.js';
import { withFormat } from './repo-format.js';

const CORE_CONFIG = `[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n`;
/** The config section recording a repository's layout. */
export const layoutSection = (layout: Layout) => `[entitygit]\n\tlayout = ${layout}\n`;
/** A new repository's config: git's core settings, the layout and today's format. */
export const repoConfig = (layout: Layout) => withFormat(CORE_CONFIG + layoutSection(layout));

/** The layout a config records (`[entitygit] layout = …`), or null. */
export function configuredLayout(text: string | null): Layout | null {
  if (text === null) return null;
  let inSection = false;
  for (const line of text.split('\n')) {
    const section = /^\s*\[([^\]]*)\]/.exec(line);
    if (section) inSection = section[1]!.trim().toLowerCase() === 'entitygit';
    else if (inSection) {
      const m = /^\s*layout\s*=\s*(\S+)\s*$/i.exec(line);
      if (m && (LAYOUTS as string[]).includes(m[1]!)) return m[1] as Layout;
    }
  }
  return null;
}

/** Whether git can read a config file: present, no NUL byte, and a [core] section. */
export function configReadable(text: string | null): boolean {
  return text !== null && !text.includes('\0') && /^\s*\[core\]/m.test(text);
}
