import type { MappingInput } from '../mapping/mapping-input.js';

/** An application's schema entity-git reads with no configuration. */
export interface KnownSchema {
  /** Its name, as `entity-git` prints it (`messages`, `flat-dag`). */
  readonly name: string;
  /** One line for people: what it is. */
  readonly description: string;
  /** What it is recognised by: these tables, each with at least these columns. */
  readonly signature: Readonly<Record<string, readonly string[]>>;
  /**
   * How it is read: the configuration it amounts to. Its optional columns (a title, token
   * counts) that a database lacks read as null.
   */
  readonly mapping: MappingInput;
}
