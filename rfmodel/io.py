"""Atomic file output: write to a temporary file beside the target, then rename.

A reader never sees a half-written result, and an interrupted run leaves the
previous file (or none) in place.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path in the target's directory; rename it onto ``path`` on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text(path, text: str) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def write_netcdf(ds, path) -> Path:
    """Save an xarray Dataset as NetCDF (h5netcdf engine), atomically."""
    ds = ds.copy()
    for k, v in list(ds.attrs.items()):  # NetCDF attributes must be str/number/array
        if isinstance(v, bool):
            ds.attrs[k] = int(v)
        elif v is None or isinstance(v, (dict, list, tuple)):
            ds.attrs[k] = str(v)
    with atomic_path(path) as tmp:
        ds.to_netcdf(tmp, engine="h5netcdf")
    return Path(path)


def write_figure(fig, path, **kw) -> Path:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or "png", **kw)
    return Path(path)
