/**
 * The logger a caller may hand to the mirror, the service, the packer, the push scheduler and
 * project git (the `logger` option of each): four levels, an event name and structured fields.
 * Default: none (silent). No telemetry library is depended on: an application forwards the events
 * to its own logs or metrics (`consoleLogger()` prints them). The events and their fields are
 * listed in packages/core/README.md, "Observability".
 */
export interface Logger {
  debug(event: string, fields: LogFields): void;
  info(event: string, fields: LogFields): void;
  warn(event: string, fields: LogFields): void;
  error(event: string, fields: LogFields): void;
}

/** The fields of one event: JSON values only, so they serialise as they are. */
export type LogFields = Readonly<Record<string, string | number | boolean | null | readonly string[]>>;

export type LogLevel = keyof Logger;
