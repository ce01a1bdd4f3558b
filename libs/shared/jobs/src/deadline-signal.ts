/**
 * A signal that aborts at `deadlineAt` (epoch ms) or as soon as one of `sources` aborts, until
 * `release()` stops both (call it when the work it bounds has ended).
 *
 * Not `AbortSignal.any([AbortSignal.timeout(ms), ...sources])`: on Node 20 a combined signal holds
 * its sources weakly, and a timeout signal that nothing else references is garbage-collected with
 * its timer, so after a collection the deadline never fires (a handler waiting for it waits
 * forever). Here the timer holds the controller, and the listeners on the sources are removed on
 * release, so long-lived sources (a worker's shutdown signal) do not gather one per job.
 */
export function deadlineSignal(
  deadlineAt: number,
  sources: readonly AbortSignal[] = [],
): { signal: AbortSignal; release: () => void; expired: () => boolean } {
  const controller = new AbortController();
  const detach: Array<() => void> = [];
  let expired = false;
  const timer = setTimeout(
    () => {
      expired = true;
      controller.abort(new DOMException('The deadline passed.', 'TimeoutError'));
    },
    Math.max(0, deadlineAt - Date.now()),
  );
  // A pending deadline does not keep a process alive (as with AbortSignal.timeout).
  timer.unref();
  for (const source of sources) {
    if (source.aborted) {
      controller.abort(source.reason);
      break;
    }
    const onAbort = () => controller.abort(source.reason);
    source.addEventListener('abort', onAbort, { once: true });
    detach.push(() => source.removeEventListener('abort', onAbort));
  }
  return {
    signal: controller.signal,
    release: () => {
      clearTimeout(timer);
      for (const remove of detach.splice(0)) remove();
    },
    /** Whether the deadline's own timer fired (it may fire a millisecond before the clock reads `deadlineAt`). */
    expired: () => expired,
  };
}

/**
 * A signal that aborts as soon as one of `sources` aborts, until `release()` detaches it (call it
 * when the work it bounds has ended). Not `AbortSignal.any(sources)`: on Node 20 each combined
 * signal stays registered with its sources, so a per-job signal combined with a long-lived one (a
 * worker's shutdown signal) kept about 1.2 KB per job for the life of the process (issue 32).
 */
export function linkedSignal(sources: readonly AbortSignal[]): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const detach: Array<() => void> = [];
  for (const source of sources) {
    if (source.aborted) {
      controller.abort(source.reason);
      break;
    }
    const onAbort = () => controller.abort(source.reason);
    source.addEventListener('abort', onAbort, { once: true });
    detach.push(() => source.removeEventListener('abort', onAbort));
  }
  return { signal: controller.signal, release: () => detach.splice(0).forEach((remove) => remove()) };
}
