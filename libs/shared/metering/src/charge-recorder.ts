/**
 * No call billed without its answer, none answered without its bill (decisions, "Operations,
 * prices, limits"), when the meter's answer can be lost: a primary that ran a call's record,
 * passed it to its replica and died before replying leaves the gateway not knowing whether the
 * call was billed (the record is promoted with the replica).
 *
 * Each call is recorded under a charge id of its own, made here (not the request id, which a
 * caller may send and repeat), so that sending its record again is harmless (meter.ts). A record
 * whose outcome is unknown (MeterUnsureError) is sent again, after a pause, as long as the call's
 * budget allows another attempt: once the store answers (the failover done), the call is answered
 * 200 with the charge the record made, made once. If the budget runs out first, the call is
 * answered 503 and its charge id is kept in a bounded list that a timer voids, once the store
 * answers again (`voidCharge`: the record, if it was made, is cancelled and its free place given
 * back). An id that cannot be voided within the meter's memory of it (CHARGE_ID_TTL_MS), that
 * the list has no room for, or that is still listed when the process closes is reported as
 * abandoned: such a call may be billed without its answer.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CHARGE_ID_TTL_MS, MeterUnsureError, type Charge, type ChargeCall, type Meter } from './meter.ts';

export interface ChargeRecorderOptions {
  /**
   * Longest one record may take (the store's command timeout; 0 in memory): another attempt is
   * made only when it can end before the call's budget does.
   */
  attemptMs: number;
  /** Pause before an unsure record is sent again (default 200 ms). */
  retryPauseMs?: number;
  /** How often the unsure charges are voided while there are any (default 1 s). */
  voidEveryMs?: number;
  /** Most unsure charges kept to void (default 10,000): beyond, the oldest is abandoned. */
  maxUnsure?: number;
  report?: (event: VoidReport) => void;
}

/** What became of a charge that was left unsure. */
export type VoidReport =
  | { outcome: 'voided'; call: ChargeCall; cancelledRecord: boolean }
  | { outcome: 'abandoned'; call: ChargeCall; reason: 'expired' | 'overflow' | 'closed' };

interface UnsureCharge {
  call: ChargeCall;
  /** When its first record was sent: the meter forgets the id CHARGE_ID_TTL_MS after it ran. */
  sentAt: number;
}

/**
 * Charge ids: this process's random prefix (96 bits, made once) and a sequence number. Unique
 * across gateways and restarts like a UUID, and cheaper: randomUUID() per call built a string of
 * about twenty pieces that the memory meter keeps for MEMORY_CHARGE_IDS calls, so the garbage
 * collector copied and promoted it (allocation profile of the embedded gateway under bench:qr).
 */
const CHARGE_ID_PREFIX = `${randomBytes(12).toString('base64url')}.`;
let chargeSequence = 0;
export const newChargeId = (): string => CHARGE_ID_PREFIX + (chargeSequence += 1).toString(36);

/** Voids sent at once in one pass: a store coming back gets a bounded burst, not the whole list. */
const VOIDS_PER_PASS = 500;

export class ChargeRecorder {
  private readonly unsure = new Set<UnsureCharge>();
  private readonly retryPauseMs: number;
  private readonly voidEveryMs: number;
  private readonly maxUnsure: number;
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly meter: Meter,
    private readonly options: ChargeRecorderOptions,
  ) {
    this.retryPauseMs = options.retryPauseMs ?? 200;
    this.voidEveryMs = options.voidEveryMs ?? 1_000;
    this.maxUnsure = options.maxUnsure ?? 10_000;
  }

  /**
   * Records one call under a new charge id. Rejects with the meter's error when the record was
   * surely not made, or with MeterUnsureError when it could not be confirmed by `retryUntil` (ms
   * since the epoch): then the charge is voided later.
   */
  async record(call: Omit<ChargeCall, 'chargeId'>, retryUntil: number): Promise<Charge> {
    const charge = { ...call, chargeId: newChargeId() };
    const sentAt = Date.now();
    // Unsure once, unsure until confirmed: a later attempt refused says nothing of an earlier one.
    let unsure: MeterUnsureError | undefined;
    for (;;) {
      try {
        return await this.meter.record(charge);
      } catch (error) {
        if (error instanceof MeterUnsureError) unsure ??= error;
        if (unsure === undefined) throw error;
        if (this.closed || Date.now() + this.retryPauseMs + this.options.attemptMs > retryUntil) {
          this.keepToVoid({ call: charge, sentAt });
          throw unsure;
        }
      }
      await sleep(this.retryPauseMs);
    }
  }

  /** Unsure charges not voided yet. */
  get pendingVoids(): number {
    return this.unsure.size;
  }

  /** Stops voiding after one last pass; what is still unsure then is reported abandoned. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.pass;
    if (this.unsure.size > 0) await this.voidPass();
    for (const entry of this.unsure) this.abandon(entry, 'closed');
  }

  private keepToVoid(entry: UnsureCharge): void {
    if (this.closed) {
      this.options.report?.({ outcome: 'abandoned', call: entry.call, reason: 'closed' });
      return;
    }
    this.unsure.add(entry);
    if (this.unsure.size > this.maxUnsure) {
      const oldest = this.unsure.values().next();
      if (oldest.done !== true) this.abandon(oldest.value, 'overflow');
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== undefined || this.pass !== undefined || this.closed || this.unsure.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pass = this.voidPass().finally(() => {
        this.pass = undefined;
        this.schedule();
      });
    }, this.voidEveryMs);
    // Voiding never keeps a process alive on its own: close() makes the last pass.
    this.timer.unref();
  }

  private async voidPass(): Promise<void> {
    const forgetBy = Date.now() - CHARGE_ID_TTL_MS + this.options.attemptMs;
    for (const entry of this.unsure) if (entry.sentAt <= forgetBy) this.abandon(entry, 'expired');
    const batch = [...this.unsure].slice(0, VOIDS_PER_PASS);
    await Promise.all(
      batch.map(async (entry) => {
        try {
          const cancelledRecord = await this.meter.voidCharge(entry.call);
          this.unsure.delete(entry);
          this.options.report?.({ outcome: 'voided', call: entry.call, cancelledRecord });
        } catch {
          // The store does not answer yet: the next pass tries again (voiding twice is harmless).
        }
      }),
    );
  }

  private abandon(entry: UnsureCharge, reason: 'expired' | 'overflow' | 'closed'): void {
    this.unsure.delete(entry);
    this.options.report?.({ outcome: 'abandoned', call: entry.call, reason });
  }
}
