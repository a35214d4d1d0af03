"""A PEP 517 build backend in the standard library only, so ``pip install ./python`` needs nothing from a
registry (setuptools before 70.1 cannot build a wheel without the separate ``wheel`` package). It packs
``grove_client/`` into a pure-Python wheel; the metadata comes from ``pyproject.toml``."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: the few [project] keys read here are simple `key = "value"` lines
    tomllib = None

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "grove_client"


def _project() -> dict:
    text = (ROOT / "pyproject.toml").read_text()
    if tomllib is not None:
        return tomllib.loads(text)["project"]
    section = text.split("[project]", 1)[1].split("\n[", 1)[0]
    p: dict = dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]*)"', section, re.M))
    p["license"] = {"text": re.search(r'license\s*=\s*\{\s*text\s*=\s*"([^"]*)"', section).group(1)}
    return p


def _dist() -> tuple[str, str]:
    p = _project()
    return p["name"].replace("-", "_"), p["version"]


def _metadata() -> str:
    p = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}", f"Summary: {p['description']}",
             f"Requires-Python: {p['requires-python']}", f"License: {p['license']['text']}"]
    for extra, reqs in p.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in reqs]
    readme = (ROOT / p.get("readme", "README.md")).read_text()
    return "\n".join(lines) + "\nDescription-Content-Type: text/markdown\n\n" + readme


def _files() -> list[Path]:
    return sorted(f for f in (ROOT / PACKAGE).rglob("*") if f.is_file() and "__pycache__" not in f.parts)


def _dist_info_files() -> dict[str, str]:
    name, version = _dist()
    return {
        "METADATA": _metadata(),
        "WHEEL": "Wheel-Version: 1.0\nGenerator: grove_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version = _dist()
    info = Path(metadata_directory) / f"{name}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    for fname, text in _dist_info_files().items():
        (info / fname).write_text(text)
    return info.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version = _dist()
    wheel_name = f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    record: list[str] = []
    with zipfile.ZipFile(Path(wheel_directory) / wheel_name, "w", zipfile.ZIP_DEFLATED) as z:
        for f in _files():
            arc = f.relative_to(ROOT).as_posix()
            data = f.read_bytes()
            z.writestr(arc, data)
            record.append(_record_line(arc, data))
        for fname, text in _dist_info_files().items():
            arc = f"{info}/{fname}"
            z.writestr(arc, text)
            record.append(_record_line(arc, text.encode()))
        record.append(f"{info}/RECORD,,")
        z.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    name, version = _dist()
    base = f"{name}-{version}"
    out = Path(sdist_directory) / f"{base}.tar.gz"
    with tarfile.open(out, "w:gz") as tar:
        for f in [ROOT / "pyproject.toml", ROOT / "README.md", *sorted((ROOT / "_build").glob("*.py")), *_files()]:
            tar.add(f, arcname=f"{base}/{f.relative_to(ROOT).as_posix()}")
        pkg_info = _metadata().encode()
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size = len(pkg_info)
        tar.addfile(ti, io.BytesIO(pkg_info))
    return out.name


# Editable installs (pip install -e): a .pth file pointing at the source tree.
def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name, version = _dist()
    wheel_name = f"{name}-{version}-0.editable-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    pth = (str(ROOT) + os.linesep).encode()
    record = [_record_line(f"{name}.pth", pth)]
    with zipfile.ZipFile(Path(wheel_directory) / wheel_name, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"{name}.pth", pth)
        for fname, text in _dist_info_files().items():
            z.writestr(f"{info}/{fname}", text)
            record.append(_record_line(f"{info}/{fname}", text.encode()))
        record.append(f"{info}/RECORD,,")
        z.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return wheel_name


get_requires_for_build_editable = get_requires_for_build_wheel
prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel
