import { EntityGitError, normaliseError } from '@entity-git/git';
import type { DagSource, DagWriter } from '../dag/dag-source.js';
import type { ProjectStore } from '../dag/project-store.js';
import type { Mirror } from '../mirror/mirror.js';
import type { MetadataKeys } from '../model/commit-message.js';
import type { ProjectGit } from '../project-seam.js';
import type { RedactionSetting } from '../redact/redaction-options.js';
import type { TurnFilesSource } from '../turn-files-seam.js';
import type { ActionMap, ActionName, ActionRequest, ActionResponse } from './action-types.js';
import { agentTurnActions } from './agent-turn-actions.js';
import { exportActions } from './export-actions.js';
import { invalidArgument } from './params.js';
import { projectActions } from './project-actions.js';
import { searchActions, type SearchActionsOptions } from './search-actions.js';
import { sessionActions } from './session-actions.js';
import { statsActions } from './stats-actions.js';
import type { WorkdirPolicy } from './workdir-policy.js';
import { turnFilesActions } from './turn-files-actions.js';

export interface ActionsOptions extends SearchActionsOptions {
  dag: DagSource;
  mirror: Mirror;
  /** Needed by `git_switch_branch` (it moves the DAG head). */
  writer?: Pick<DagWriter, 'setHead'>;
  /** Needed by the project actions. */
  projects?: ProjectStore;
  /** Needed by `revert_agent_turn` and `project_agent_commits` (the project auto-commit, e.g. `createNodeProjectGit()`). */
  projectGit?: Pick<ProjectGit, 'revertAgentTurn' | 'agentCommits'>;
  /** Where `session_stats` reads tokens and cost: the mirror's own `metadataKeys`. Default `defaultMetadataKeys`. */
  metadataKeys?: Partial<MetadataKeys>;
  /** What `export_transcript` redacts, as the mirror's option. Default `{ preset: 'recommend' }`. */
  redaction?: RedactionSetting;
  /** Checks and resolves a new project's workdir before it is stored (Node: node-fs's `nodeWorkdirPolicy`). */
  workdirPolicy?: WorkdirPolicy;
  /** Needed by `list_turn_files`, `turn_file_diff`, `restore_turn_files` (the shadow snapshots, e.g. `new ShadowProjectGit({ root })`). */
  turnFiles?: TurnFilesSource;
}

export type Actions = { [K in ActionName]: (params: ActionMap[K]['params']) => Promise<ActionMap[K]['result']> } & {
  /** Validate and run one request; never throws (errors come back as `{ ok: false }`). */
  handle(request: ActionRequest): Promise<ActionResponse>;
};

/**
 * The action handlers (see docs/design.md, 'Replay and actions'), transport-free: input validated
 * at the edge with typed errors (`INVALID_ARGUMENT`, `INVALID_ID`, `INVALID_WORKDIR`,
 * `UNKNOWN_ACTION`, and the mirror's and stores' own codes), results as the types in
 * action-types.ts. Replay is read-only: `git_checkout` returns the view and the node a new message
 * would continue from; the DAG changes only when that message is written (a fork), and the next
 * sync makes the branch.
 */
export function createActions(options: ActionsOptions): Actions {
  const actions: Omit<Actions, 'handle'> = {
    ...agentTurnActions(options),
    ...sessionActions(options),
    ...projectActions(options),
    ...statsActions(options),
    ...searchActions(options),
    ...exportActions(options),
    ...turnFilesActions(options),
  };
  return { ...actions, handle: (request: ActionRequest) => dispatch(actions, request) };
}

/**
 * Validate `request` and run the handler of `table` it names; never throws: the result, or the
 * error's code and message (`UNKNOWN_ACTION` for a name the table lacks, `STORAGE_ERROR` for an
 * error without a code), as `{ ok }`, with the request's `id` when it had one. What `handle`
 * does; a server adding actions of its own dispatches to its table through it.
 */
export async function dispatch(table: object, request: ActionRequest): Promise<ActionResponse> {
  const id =
    request && typeof request === 'object' && (typeof request.id === 'string' || typeof request.id === 'number')
      ? request.id
      : undefined;
  const envelope = <T extends ActionResponse>(r: T): T => (id === undefined ? r : { ...r, id });
  try {
    if (!request || typeof request !== 'object' || typeof request.action !== 'string')
      invalidArgument('a request needs an action name');
    const fn = Object.hasOwn(table, request.action)
      ? (table as Record<string, (p: unknown) => Promise<unknown>>)[request.action]
      : undefined;
    if (typeof fn !== 'function')
      throw new EntityGitError('UNKNOWN_ACTION', `unknown action ${JSON.stringify(request.action)}`, {
        action: request.action,
      });
    return envelope({ ok: true, result: await fn(request.params) });
  } catch (err) {
    const e = normaliseError(err, { code: 'STORAGE_ERROR' });
    return envelope({ ok: false, error: { code: e.code, message: e.message } });
  }
}
