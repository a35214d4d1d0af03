// The bench fixture: one local page of 48 buttons and some text, served on an ephemeral loopback port.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Fixture { url: string; hostPort: string; close(): Promise<void> }

const FIXTURE = `<!doctype html><html><head><title>bench</title><style>
body{margin:0;font:16px sans-serif} .grid{display:grid;grid-template-columns:repeat(8,1fr);gap:4px;padding:8px}
button{height:60px} #log{padding:8px}</style></head><body>
<div class="grid">${Array.from({ length: 48 }, (_, i) => `<button id="b${i}" onclick="document.getElementById('log').textContent='clicked ${i} '+(++window.n)">Button ${i}</button>`).join('')}</div>
<div id="log">none</div><script>window.n=0</script>
<p>${'Lorem ipsum dolor sit amet. '.repeat(80)}</p></body></html>`;

export async function startFixture(): Promise<Fixture> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(FIXTURE);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    hostPort: `127.0.0.1:${port}`,
    close: () => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); }),
  };
}
