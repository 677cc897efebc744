// What the server checks before it answers anyone: the Host header (a DNS-rebinding page reaches
// 127.0.0.1 under a name of its own, and would be same-origin with us), the token's strength when
// the user picks it, and a delay after wrong tokens, one attempt at a time.
import { createHash, timingSafeEqual } from 'node:crypto';

/** A user-given token carries at least this many bits (estimated from its length and alphabet). */
export const MIN_TOKEN_BITS = 128;
/** Default wait added after each wrong token before the next attempt is checked (ms). */
export const DEFAULT_FAILED_ATTEMPT_DELAY_MS = 250;
/** Attempts waiting their turn beyond this are refused (429) without being checked. */
export const MAX_WAITING_ATTEMPTS = 64;

/**
 * The bits a token may carry: its length times log2 of the smallest alphabet it is written in
 * (hex 16, base64url 64, any other printable text 95). An upper bound on a guesser's work,
 * so a short or hex-only token is refused before it protects anything.
 */
export function tokenBits(token: string): number {
  const alphabet = /^[0-9a-f]*$/i.test(token) ? 16 : /^[A-Za-z0-9_+/=-]*$/.test(token) ? 64 : 95;
  return token.length * Math.log2(alphabet);
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Compared as digests so neither the length nor a prefix of the token leaks through timing. */
export function tokenMatches(given: string | null, token: string): boolean {
  return given !== null && timingSafeEqual(digest(given), digest(token));
}

/** The Host header values a request may carry: the loopback names at `port`, and `host` itself. */
export function defaultAllowedHosts(host: string, port: number): string[] {
  const inUrl = host.includes(':') ? `[${host}]` : host;
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${inUrl}:${port}`].filter(
    (h, i, all) => all.indexOf(h) === i,
  );
}

/** Whether a request's `Host` header names this server (compared without case; a missing one never does). */
export function hostAllowed(header: string | undefined, allowed: readonly string[]): boolean {
  return header !== undefined && allowed.includes(header.toLowerCase());
}

/**
 * Token checks, one at a time while wrong tokens keep coming: each wrong one pushes the next check
 * back by `delayMs`, so guesses run at 1000/delayMs a second however many sockets a guesser opens.
 * With no recent failure a check runs at once.
 */
export class AttemptGate {
  readonly #delayMs: number;
  #queue: Promise<void> = Promise.resolve();
  #until = 0;
  #waiting = 0;

  constructor(delayMs: number = DEFAULT_FAILED_ATTEMPT_DELAY_MS) {
    this.#delayMs = delayMs;
  }

  /**
   * Runs `check` when its turn comes; `'busy'` without running it when too many attempts wait.
   * A `false` from `check` is a failure and delays the attempts behind it.
   */
  async attempt(check: () => boolean): Promise<boolean | 'busy'> {
    if (this.#waiting >= MAX_WAITING_ATTEMPTS) return 'busy';
    this.#waiting++;
    const turn = this.#queue.then(async () => {
      const wait = this.#until - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const ok = check();
      if (!ok) this.#until = Math.max(Date.now(), this.#until) + this.#delayMs;
      return ok;
    });
    this.#queue = turn.then(() => undefined);
    try {
      return await turn;
    } finally {
      this.#waiting--;
    }
  }
}
