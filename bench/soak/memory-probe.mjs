// Preloaded into each of the product's processes by the soak (`node --expose-gc --import
// <this>`), never by the product itself: a loopback HTTP endpoint on SOAK_PROBE_PORT that forces
// a full garbage collection and answers the process's memory, so that the soak reads the heap
// that stays in use rather than whatever garbage the collector had not reached yet. Plain
// JavaScript: it runs before any loader, in built processes.
import { createServer } from 'node:http';

const port = Number(process.env.SOAK_PROBE_PORT);
if (Number.isInteger(port) && port > 0 && typeof globalThis.gc === 'function') {
  const server = createServer((_request, response) => {
    globalThis.gc();
    globalThis.gc();
    const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ rss, heapUsed, external, arrayBuffers }));
  });
  server.listen(port, '127.0.0.1');
  // The probe never keeps a process alive that is otherwise done.
  server.unref();
}
