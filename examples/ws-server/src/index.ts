export {
  createServer,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_MAX_PAYLOAD,
  type ServerOptions,
  type EntityGitServer,
} from './server.js';
export { echoAgent, ECHO_NOTES_FILE, type Agent, type AgentInput, type AgentTools } from './agent.js';
export {
  createServerActions,
  DEFAULT_EXPORT_LIMIT,
  MAX_EXPORT_LIMIT,
  DEFAULT_LOG_LIMIT,
  MAX_LOG_LIMIT,
  MAX_MESSAGE_LENGTH,
  type ServerActions,
  type ServerActionsOptions,
} from './server-actions.js';
export { turnWindow, DEFAULT_READ_AHEAD } from './turn-window.js';
export * from './repo-bundle.js';
export { repoRoute, type RepoRouteOptions } from './repo-route.js';
export { seedDemo, DEMO_SESSION, NOTES_SESSION } from './demo-data.js';
export * from './protocol.js';
