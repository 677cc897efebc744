import { createObjectEngine, OBJECT_ENGINE, type ObjectEngineOptions } from '@entity-git/project';
import { describe, expect, it } from 'vitest';

describe('the object engine’s names', () => {
  it('its results name it object; without a storage or an fs it is refused', () => {
    expect(OBJECT_ENGINE).toBe('object');
    const options: ObjectEngineOptions = { lockTimeoutMs: 1 };
    expect(() => createObjectEngine(options)).toThrow(/needs a storage or an fs/);
  });
});
