// The fault pages: a local HTTP server whose pages start a busy loop, a dialog or popup storm, never finish loading,
// or download 400 MB; and the actions that lead an episode into each of them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Action } from '../../protocol/action.ts';
import type { PageFault } from './config.ts';

const BTN = 'position:absolute;left:10px;top:10px;width:300px;height:60px';
const faultPage = (js: string) =>
  `<!doctype html><html><head><title>fault</title></head><body><button style="${BTN}" onclick="${js}">go</button></body></html>`;

export function startFaultServer(): Promise<{ url: string; close(): Promise<void> }> {
  const pages: Record<string, string> = {
    '/busy': faultPage('setTimeout(() => { while (true) {} }, 100)'),
    '/dialogs': faultPage("setTimeout(() => { for (;;) { alert(1); confirm('x'); } }, 100)"),
    '/popups': faultPage("for (let i = 0; i < 200; i++) window.open('/popup?' + i)"),
    '/popup': '<!doctype html><title>popup</title><p>popup</p>',
    '/never-link': faultPage("location.href = '/never'"),
    '/download-link': faultPage("location.href = '/big'"),
  };
  const server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0];
    if (p === '/never') {
      // Headers and a little HTML, then nothing: the document never finishes loading.
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<!doctype html><title>never</title><p>loading');
      req.on('close', () => res.destroy());
      return;
    }
    if (p === '/big') {
      // 400 MB of download, streamed: more than the default per-download limit.
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="big.bin"' });
      const chunk = Buffer.alloc(1 << 20, 7);
      let sent = 0;
      const pump = () => {
        while (sent < 400 && res.write(chunk)) sent++;
        if (sent >= 400) res.end();
        else res.once('drain', pump);
      };
      req.on('close', () => res.destroy());
      pump();
      return;
    }
    const body = pages[p];
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/html' });
    res.end(body ?? 'not found');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      }),
    ),
  );
}

/** The actions that meet fault f on the fault server at faultUrl. */
export function faultActions(f: PageFault, faultUrl: string): Action[] {
  const click: Action = { action: 'click', x: 150, y: 40 };
  switch (f) {
    case 'busy_loop':
      return [{ action: 'goto', url: `${faultUrl}/busy` }, click];
    case 'dialog_storm':
      return [{ action: 'goto', url: `${faultUrl}/dialogs` }, click];
    case 'popup_storm':
      return [{ action: 'goto', url: `${faultUrl}/popups` }, click];
    case 'never_loads':
      return [{ action: 'goto', url: `${faultUrl}/never` }];
    case 'large_download':
      return [{ action: 'goto', url: `${faultUrl}/download-link` }, click, { action: 'wait', ms: 3000 }];
  }
}
