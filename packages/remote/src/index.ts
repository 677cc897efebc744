export {
  defineRemote,
  redactUrl,
  type Remote,
  type RemoteOptions,
  type HttpClient,
  type AuthCallback,
  type AuthFailureCallback,
  type AuthSuccessCallback,
  type GitAuth,
} from './remote.js';
export type { RemoteTarget } from './target.js';
export { pushSession, type PushOptions, type PushResult, type RefUpdate } from './push.js';
export { fetchSession } from './fetch.js';
export type { FetchOptions, FetchResult } from './fetch-types.js';
export { restoreSessions, type RestoreOptions, type RestoreReport, type RestoreEntry } from './restore.js';
export {
  createPushScheduler,
  type PushScheduler,
  type PushSchedulerOptions,
  type PushSchedulerEvents,
  type PushSchedulerEventName,
  type PushSessionStatus,
} from './push-scheduler.js';
export { buildHeadRecord, parseHeadRecord, HEAD_RECORD_REF } from './head-record.js';
