"""File input and atomic output.

Output is written to a temporary file beside the target, then renamed: a reader never sees a
half-written result, and an interrupted run leaves the previous file (or none) in place.  A path that
cannot be written (a read-only folder, a name too long, a folder under a regular file) or a text file
that cannot be read (missing, not UTF-8) is one :class:`~rfmodel.errors.RfmodelError` naming the path.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from rfmodel.errors import ParseError, RfmodelError

#: The largest text input read whole (a SASS dump of a big library is a few hundred MB).
MAX_TEXT_BYTES = 1 << 30


def read_text(path: str | os.PathLike, what: str = "file", max_bytes: int = MAX_TEXT_BYTES) -> str:
    """A UTF-8 text file's contents: one error naming the path when it is missing, not a regular file (a
    device such as ``/dev/zero``, a folder, a pipe), larger than ``max_bytes``, unreadable or not text."""
    p = Path(path)
    if not p.exists():
        raise RfmodelError(f"{path}: no such {what}")
    if not p.is_file():
        raise RfmodelError(f"{path}: not a regular file (a folder, device or pipe); expected a {what}")
    try:
        size = p.stat().st_size
        if size > max_bytes:
            mib = 2**20
            raise RfmodelError(
                f"{path}: {size / mib:.0f} MiB is larger than a {what} may have ({max_bytes / mib:.0f} MiB)"
            )
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ParseError(str(path), None, f"not UTF-8 text (byte {e.start}: {e.reason})") from None
    except OSError as e:
        raise RfmodelError(f"{path}: cannot read the {what}: {e.strerror or e}") from None


def check_writable(path: str | os.PathLike) -> None:
    """Fail early, before a long run, when ``path`` (a file or folder to create) cannot be written: its
    nearest existing ancestor must be a writable folder and every name must fit the file system."""
    p = Path(path).absolute()
    for part in p.parts:
        if len(os.fsencode(part)) > 255:
            raise RfmodelError(f"{path}: cannot write here: a name is longer than 255 bytes")
    anc = p
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if anc != p and not anc.is_dir():
        raise RfmodelError(f"{path}: cannot write here: {anc} is a file, not a folder")
    folder = anc if anc.is_dir() else anc.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        raise RfmodelError(f"{path}: cannot write here: {folder} is not writable")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _unwritable(path: Path, e: OSError) -> RfmodelError:
    return RfmodelError(f"{path}: cannot write here: {e.strerror or e}")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path in the target's directory; rename it onto ``path`` on success."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:100]}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise _unwritable(path, e) from None
    os.close(fd)
    try:
        yield Path(tmp)
        try:
            os.chmod(tmp, 0o666 & ~_umask())  # what any other tool's new file gets, not mkstemp's 0600
            os.replace(tmp, path)
        except OSError as e:
            raise _unwritable(path, e) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text(path, text: str) -> Path:
    """Write ``text`` (UTF-8, ``\n`` line ends) to ``path`` atomically, with the permissions the umask
    gives."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8", newline="\n")
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


def write_npz(path, arrays: dict, meta: dict) -> None:
    """Write ``arrays`` and the JSON-able ``meta`` (under ``__meta__``) as one ``.npz`` file, atomically."""
    import json

    import numpy as np

    blob = json.dumps(meta, default=str)
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, __meta__=np.array(blob), **arrays)


def read_npz(path) -> dict:
    """The arrays and metadata of a file written by :func:`write_npz`, as one dict of fields."""
    import json

    import numpy as np

    with np.load(path, allow_pickle=False) as z:
        out = json.loads(str(z["__meta__"]))
        out.update({k: z[k] for k in z.files if k != "__meta__"})
    return out


def write_figure(fig, path, **kw) -> Path:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or "png", **kw)
    return Path(path)
