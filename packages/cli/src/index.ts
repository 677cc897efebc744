/** The `entity-git` command is the work of the service/CLI issue; this package holds its place in the workspace. */
export const COMMAND_NAME = 'entity-git';
