// A session page's state (what app.ts keeps of the session on screen), what its view is given, and
// the branch names it shows.
import type { SessionStats } from '@entity-git/core';
import type {
  AgentCommitsListResult,
  BranchSummary,
  CheckoutResult,
  ProjectStatusResult,
  ProjectSummary,
  ProjectTurnResult,
  SessionSummary,
} from 'ws-server/protocol';
import type { ExportFormat } from '@entity-git/core';
import { branchLabel, type BranchFork } from './branch-labels.js';
import type { PagedHistory, Timeline } from './history-pages.js';
import type { RestoreState } from './restore-view.js';
import type { TurnFilesState } from './turn-files-view.js';
import type { UndoState } from './undo-view.js';

export interface SessionPage {
  id: string;
  /** The branch's timeline: as long as the branch, its commits read in pages (history-pages.ts). */
  history: Timeline;
  /** Reads the timeline's other pages; null when it is whole. */
  pages: PagedHistory | null;
  view: CheckoutResult | null;
  branches: BranchSummary[];
  /** Where each branch leaves main (from each branch's history), by name; null for main itself. */
  forks: Map<string, BranchFork | null>;
  /** Earlier turns the user folded away. */
  collapsed: Set<number>;
  /** All earlier turns rendered, not only the last {@link EARLIER_SHOWN}. */
  showAll: boolean;
  /** Earlier turns whose messages were not read (a step reads a window of turns, see loading.ts). */
  notLoaded: number;
  /** The timeline drawn for this history, reused while it is the same (a step only moves its mark). */
  timeline?: TimelineState;
  /** Tokens and cost (`session_stats`, usage-view.ts): undefined while being read, null when not available. */
  stats?: SessionStats | null;
}

/** The timeline panel of a history (timeline-view.ts): its rows are drawn only where the list is scrolled to. */
export interface TimelineState {
  key: string;
  el: HTMLElement;
  list: HTMLElement;
  /** Empty rows as tall as the rows not drawn above and below the ones drawn. */
  above: HTMLElement;
  below: HTMLElement;
  /** Rows (commits). */
  n: number;
  /** A commit's row, oldest first (row 0 is turn 1's commit). */
  index: Map<string, number>;
  /** Rows made so far, by row. */
  made: Map<number, HTMLElement>;
  /** The rows in the list now: first to last, exclusive. */
  first: number;
  last: number;
  /** The current entry's row; -1 for none. */
  current: number;
  /** The current entry's row when it was last brought into view: a render scrolls to it only when it changed since. */
  shown: number;
  /** The list's scroll offset, px (kept: a re-render takes the list out of the page, which resets it). */
  top: number;
}

/** Earlier turns rendered by default: the rest wait behind a button (a long session stays fast). */
export const EARLIER_SHOWN = 20;

export interface SessionViewInput {
  s: SessionPage;
  summary: SessionSummary | undefined;
  project: ProjectSummary | undefined;
  online: boolean;
  saved: boolean;
  saving: boolean;
  draft: string;
  sending: boolean;
  /** The project auto-commit of the last turn sent in this session (from this page or pushed by the server). */
  projectTurn: ProjectTurnResult | undefined;
  /** The project's workdir as last read (`project_status`); undefined when unknown (offline). */
  projectStatus: ProjectStatusResult | undefined;
  /** The session's agent commits in its project (online, in a project); undefined when unknown. */
  agentCommits: AgentCommitsListResult | undefined;
  /** The last undo asked from this page. */
  undo: UndoState | null;
  /** The files the turn on screen changed in the project (online, in a project); null before they are read. */
  turnFiles: TurnFilesState | null;
  /** The last restore of a turn's files asked from this page, in this session. */
  restore: RestoreState | null;
  saveReport: HTMLElement | null;
  on: {
    rerender(): void;
    /** Read and show every earlier turn. */
    showAll(): void;
    makeHead(branch: string): void;
    save(): void;
    /** Download the branch as a file (export-view.ts). */
    exportTranscript(branch: string, format: ExportFormat): void;
    send(): void;
    draft(text: string): void;
    /** Undo the agent commit `commit` of the turn whose session commit is `sessionCommit`. */
    undo(commit: string, sessionCommit: string): void;
    /** Open (or close) one file's diff in the files panel. */
    openDiff(path: string): void;
    /** Restore the files of turn `turn` (session commit `commit`) to before it. */
    restoreFiles(turn: number, commit: string): void;
    /** Undo the last restore. */
    undoRestore(): void;
  };
}

export const labelOf = (s: SessionPage, name: string) => branchLabel({ name }, s.forks.get(name) ?? null);
