"""``pip install --no-build-isolation ./python`` works offline: no registry (--no-index), no ``wheel`` package."""

import subprocess
import sys
import venv
from pathlib import Path

PKG = Path(__file__).resolve().parents[1]


def test_pip_install_offline_into_a_fresh_venv(tmp_path):
    venv.create(tmp_path / "env", with_pip=True)
    py = tmp_path / "env" / "bin" / "python"
    out = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-cache-dir", str(PKG)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    check = subprocess.run([py, "-c", "import grove_client, grove_client.env, grove_client.aio; print(grove_client.__version__, grove_client.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert check.returncode == 0, check.stderr
    version, where = check.stdout.split()
    assert version == "0.1.0" and str(tmp_path) in where  # the installed copy, not the source tree
    assert sys.version_info >= (3, 10)
