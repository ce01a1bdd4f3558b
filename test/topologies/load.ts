/** A steady load of GETs from `concurrency` loops, each call's start, end and status kept. */
export interface Call {
  startedAt: number;
  endedAt: number;
  /** HTTP status, or 0 when no answer came (connection refused or reset, our own 30 s cap). */
  status: number;
  /** `Retry-After` of the answer, when it had one. */
  retryAfter: string | null;
}

export interface Load {
  stop(): Promise<void>;
}

export function runLoad(url: string, headers: Record<string, string>, concurrency: number, calls: Call[]): Load {
  let running = true;
  const loop = async () => {
    while (running) {
      const startedAt = Date.now();
      let status = 0;
      let retryAfter: string | null = null;
      try {
        const response = await fetch(url, { headers, signal: AbortSignal.timeout(30_000) });
        await response.arrayBuffer();
        status = response.status;
        retryAfter = response.headers.get('retry-after');
      } catch {
        status = 0;
      }
      calls.push({ startedAt, endedAt: Date.now(), status, retryAfter });
      // A refused call answers at once: pause so a loop does not spin.
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const loops = Array.from({ length: concurrency }, loop);
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}
