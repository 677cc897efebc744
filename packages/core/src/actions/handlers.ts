import type { ActionMap, ActionName } from './action-types.js';

/** The handlers of the actions `K`, each taking its params and resolving its result. */
export type Handlers<K extends ActionName> = {
  [P in K]: (params: ActionMap[P]['params']) => Promise<ActionMap[P]['result']>;
};
