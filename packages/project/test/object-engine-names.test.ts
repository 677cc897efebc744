import {
  createIsoGitEngine,
  createObjectEngine,
  ISO_GIT_ENGINE,
  OBJECT_ENGINE,
  type IsoGitEngineOptions,
  type ObjectEngineOptions,
} from '@entity-git/project';
import { describe, expect, it } from 'vitest';

describe('the object engine’s names', () => {
  it('the Iso names are deprecated aliases of the new ones; the engine’s name string is unchanged', () => {
    expect(createIsoGitEngine).toBe(createObjectEngine);
    expect(ISO_GIT_ENGINE).toBe(OBJECT_ENGINE);
    expect(OBJECT_ENGINE).toBe('isomorphic-git');
    const options: IsoGitEngineOptions = { lockTimeoutMs: 1 } satisfies ObjectEngineOptions;
    expect(() => createObjectEngine(options)).toThrow(/needs a storage or an fs/);
  });
});
