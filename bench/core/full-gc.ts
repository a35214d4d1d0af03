// A full garbage collection in the `grove serve` child, asked for through its inspector (the server is started
// with --inspect=127.0.0.1:0 for this; see churn.ts). Node runs no idle-time collection, so a server that went
// idle keeps the garbage of its last minutes in its heap, and its RSS with it: a figure read then says more about
// when V8 last collected than about what the server retains.
import WebSocket from 'ws';

/** The inspector's WebSocket URL from the child's stderr ("Debugger listening on ws://…"). */
export function inspectorUrl(stderr: string): string | null {
  return /Debugger listening on (ws:\/\/\S+)/.exec(stderr)?.[1] ?? null;
}

/** Runs HeapProfiler.collectGarbage `times` times in the process behind `url`, then detaches. */
export async function fullGc(url: string, times = 2, timeoutMs = 30_000): Promise<void> {
  const ws = new WebSocket(url);
  try {
    await new Promise<void>((ok, fail) => {
      ws.once('open', () => ok());
      ws.once('error', fail);
    });
    let id = 0;
    const call = (method: string) =>
      new Promise<void>((ok, fail) => {
        const my = ++id;
        const timer = setTimeout(() => fail(new Error(`${method}: no answer in ${timeoutMs} ms`)), timeoutMs);
        const onMessage = (data: WebSocket.RawData) => {
          const msg = JSON.parse(String(data)) as { id?: number; error?: { message: string } };
          if (msg.id !== my) return;
          clearTimeout(timer);
          ws.off('message', onMessage);
          if (msg.error) fail(new Error(`${method}: ${msg.error.message}`));
          else ok();
        };
        ws.on('message', onMessage);
        ws.send(JSON.stringify({ id: my, method }));
      });
    for (let i = 0; i < times; i++) await call('HeapProfiler.collectGarbage');
  } finally {
    ws.close();
  }
}
