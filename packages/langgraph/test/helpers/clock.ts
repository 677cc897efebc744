import { vi } from 'vitest';

/**
 * The clock every LangGraph write reads (`Date`, faked alone by vitest: timers stay real). A
 * checkpoint's `ts` is the only time the mirror reads, so a scenario run twice at the same clock
 * gives the same nodes whichever saver stores it.
 */
export const clock = {
  /** Fakes `Date` only, at `seconds` since the epoch. */
  start(seconds: number): void {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(seconds * 1000);
  },
  at(seconds: number): void {
    vi.setSystemTime(seconds * 1000);
  },
  tick(seconds = 1): void {
    vi.setSystemTime(Date.now() + seconds * 1000);
  },
  stop(): void {
    vi.useRealTimers();
  },
};
