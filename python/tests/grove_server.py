"""Starts a real Grove server (``bin/grove.mjs serve``) for the tests and a local fixture site.

The server listens on an ephemeral loopback port; its process group is ended when the tests finish (and a
``prctl``-free safety net: the child gets SIGTERM, then SIGKILL after a grace period).
"""

from __future__ import annotations

import http.server
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
API_KEY = "pytest-key-0123456789"


class GroveServer:
    def __init__(self, *extra: str, api_key: str = API_KEY) -> None:
        self.api_key = api_key
        self.data_dir = tempfile.mkdtemp(prefix="grove-pytest-")
        args = ["node", str(REPO / "bin" / "grove.mjs"), "serve", "--port", "0", "--api-key", api_key,
                "--data-dir", self.data_dir, "--log-level", "warn", *extra]
        self.proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     start_new_session=True, text=True)
        self.lines: list[str] = []
        self.url = self._read_url()
        threading.Thread(target=self._drain, daemon=True).start()

    def _read_url(self) -> str:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.lines.append(line)
            m = re.search(r"listening on (http://\S+)", line)
            if m:
                return m.group(1)
        self.stop()
        raise RuntimeError("grove serve did not start:\n" + "".join(self.lines))

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def stop(self) -> None:
        """Ends the server's process group, then removes its data folder."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            except ProcessLookupError:
                pass
        shutil.rmtree(self.data_dir, ignore_errors=True)


PAGES = {
    "/": "<!doctype html><html><head><title>home</title></head><body style='margin:0'>"
    "<button id=b style='position:absolute;left:0;top:0;width:200px;height:100px' "
    "onclick=\"document.title='clicks '+(++window.n)\">click me</button><script>window.n=0</script></body></html>",
    # Orchard-GUI parity: fixed controls on a tall page (scrolling moves the page, not them); a field that upper-cases
    # what is typed; a button that adds one; a link that opens a tab.
    "/og": "<!doctype html><html><head><title>og</title><style>body{margin:0;height:3000px} .f{position:fixed;left:0;"
    "width:200px;height:40px;display:block;margin:0;padding:0;border:0;font:16px sans-serif}</style></head><body>"
    "<a class=f style='top:0' href='/page/og-next'>Next page</a>"
    "<input class=f style='top:60px' aria-label='Search recipes' oninput='this.value=this.value.toUpperCase()'>"
    "<button class=f style='top:120px' onclick=\"var b=document.createElement('button');b.className='f';"
    "b.style.top='300px';b.textContent='Added';document.body.appendChild(b)\">Add item</button>"
    "<a class=f style='top:180px' href='/page/popup' target=_blank>Open tab</a></body></html>",
}


class FixtureSite:
    """A loopback site: ``/`` a button page, ``/page/<name>`` a page titled ``<name>``."""

    def __init__(self) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                path = self.path.split("?")[0]
                if path.startswith("/page/"):
                    name = path[len("/page/"):]
                    body = (f"<!doctype html><html><head><title>{name}</title></head><body><h1>{name}</h1>"
                            f"<a href='/page/{name}-next'>next</a></body></html>")
                else:
                    body = PAGES.get(path, "")
                    if not body:
                        self.send_response(404)
                        self.send_header("content-length", "0")
                        self.end_headers()
                        return
                data = body.encode()
                self.send_response(200)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host_port = f"127.0.0.1:{self.server.server_address[1]}"
        self.url = f"http://{self.host_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
