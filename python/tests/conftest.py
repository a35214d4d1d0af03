import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the package, when it is not pip-installed
sys.path.insert(0, str(Path(__file__).resolve().parent))

from grove_server import FixtureSite, GroveServer  # noqa: E402

from grove_client import Client  # noqa: E402


@pytest.fixture(scope="session")
def server():
    s = GroveServer("--reaper-interval-ms", "200", "--max-sandboxes", "24")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def site():
    s = FixtureSite()
    yield s
    s.stop()


@pytest.fixture()
def client(server):
    with Client(server.url, server.api_key) as c:
        yield c


@pytest.fixture()
def browser_opts(site):
    return {"start_url": site.url + "/", "network": {"allow": [site.host_port]}, "viewport": {"width": 640, "height": 480}}
