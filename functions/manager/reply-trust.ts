import type { InboundReply } from '../../engine/index.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import type { RequestTokens } from './request-tokens.js';

/**
 * Which replies and dead letters may act on a job. The broker is the trust boundary
 * (docs/protocol.md): with reply authentication off, all of them; on (`replyAuth`), only those that
 * carry the token their request was sent with. The others are counted, logged and dropped.
 */
export class ReplyTrust {
  constructor(
    private readonly tokens: RequestTokens,
    private readonly telemetry: Telemetry,
    private readonly replyAuth: boolean,
  ) {}

  /**
   * The replies that may act, each with the attempt its token vouches for; the others are
   * acknowledged (they would be as unauthenticated next time).
   */
  async authenticated(replies: readonly InboundReply[]): Promise<readonly InboundReply[]> {
    if (!this.replyAuth) return replies;
    await this.tokens.ready();
    const taken: InboundReply[] = [];
    for (const reply of replies) {
      const claim = this.tokens.verify(reply.token, reply.correlationId, reply.attempt);
      if (claim) {
        taken.push({ ...reply, attempt: claim.attempt });
        continue;
      }
      this.telemetry.metrics.count('replies_ignored_total', { reason: 'unauthenticated' });
      this.telemetry.logger.warn("reply without its request's token ignored (reply authentication is on)", {
        correlationId: reply.correlationId,
        token: reply.token === undefined ? 'none' : "not this request's",
      });
    }
    return taken;
  }

  /** Whether a dead letter may be acted on (a forged one is counted and ignored). */
  async genuineDeadLetter(
    correlationId: string,
    attempt: number | undefined,
    token?: string,
  ): Promise<boolean> {
    if (!this.replyAuth) return true;
    await this.tokens.ready();
    if (this.tokens.verify(token, correlationId, attempt)) return true;
    this.telemetry.metrics.count('dead_letters_ignored_total', { reason: 'unauthenticated' });
    this.telemetry.logger.warn(
      "dead letter without its request's token ignored (reply authentication is on)",
      {
        correlationId,
      },
    );
    return false;
  }
}
