"""File input and atomic output.

Output is written to a temporary file beside the target, then renamed: a reader never sees a
half-written result, and an interrupted run leaves the previous file (or none) in place.  A path that
cannot be written (a read-only folder, a name too long, a folder under a regular file, a full disk) or a
text file that cannot be read (missing, not UTF-8) is one :class:`~rfmodel.errors.RfmodelError` naming
the path; a failed write leaves no temporary file behind.

Files that belong together (a Pareto front's table, Dataset and plots) are written as one set
(:func:`output_set`): every member goes to a temporary name first and all are renamed only when every one
was written, so the set is complete or absent.  A run that owns a folder (``optimize --out``) holds
:func:`folder_lock` on it: a second run into the same folder is refused while the first lives, and the
temporary files of a run that was killed are removed by the next one.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import re
import socket
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


def _refuse_special(path) -> None:
    """An output never replaces what is not a regular file or folder (a named pipe, a device such as
    ``/dev/null``, a socket): the atomic rename would put a regular file in its place."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return  # absent (or unreachable: the write says why)
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise WriteError(
            f"{path}: cannot write here: it is a device, named pipe or socket, not a regular "
            "file (an output replaces the file at its path)"
        )


def check_writable(path: str | os.PathLike) -> None:
    """Fail early, before a long run, when ``path`` (a file or folder to create) cannot be written: its
    nearest existing ancestor must be a writable folder, every name must fit the file system, and an
    existing ``path`` must be a regular file or folder (never a device or pipe)."""
    p = Path(path).absolute()
    _refuse_special(p)
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


class WriteError(RfmodelError, OSError):
    """An output that could not be written (a full disk, a read-only folder ...): a user error, which a
    best-effort writer (a cache entry) may also catch as the ``OSError`` it is."""

    def __reduce__(self):  # rebuilt from its message (a worker process's error travels pickled)
        return type(self), (str(self),)


#: why a write failed, for the errors that say it less plainly than the user needs
_REASONS = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large for this file system or process limit",
}


def write_failure(e: BaseException) -> str:
    """Why a write failed, in words (``no space left on device``)."""
    return _REASONS.get(getattr(e, "errno", None)) or getattr(e, "strerror", None) or str(e)


def _unwritable(path: Path, e: BaseException) -> RfmodelError:
    if isinstance(e, WriteError):
        return e
    return WriteError(f"{path}: cannot write here: {write_failure(e)}")


#: the name of a temporary file beside ``path`` (``.NAME.XXXXXXXX.tmp``, as :func:`tempfile.mkstemp`
#: draws the middle); :func:`remove_temporaries` knows them by it
_TEMPORARY = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")


def _temporary(path: Path) -> Path:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:100]}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise _unwritable(path, e) from None
    os.close(fd)
    return Path(tmp)


def _publish(tmp: Path, path: Path) -> None:
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # what any other tool's new file gets, not mkstemp's 0600
        os.replace(tmp, path)
    except OSError as e:
        raise _unwritable(path, e) from None


class _OutputSet:
    """The members of one :func:`output_set` written so far: (temporary, target) pairs."""

    def __init__(self, members, folder):
        self.members = {os.path.abspath(p) for p in members}
        self.folder = os.path.abspath(folder) if folder is not None else None
        self.staged: dict[str, tuple[Path, Path]] = {}

    def holds(self, path: Path) -> bool:
        key = os.path.abspath(path)
        return key in self.members or (self.folder is not None and os.path.dirname(key) == self.folder)

    def stage(self, tmp: Path, path: Path) -> None:
        old = self.staged.pop(os.path.abspath(path), None)
        if old is not None:  # written twice: the later one counts
            with contextlib.suppress(OSError):
                os.unlink(old[0])
        self.staged[os.path.abspath(path)] = (tmp, path)

    def discard(self) -> None:
        for tmp, _ in self.staged.values():
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        self.staged.clear()

    def commit(self) -> None:
        """Rename every member into place, or none: a file a member replaces is kept aside until the whole
        set is in place, and put back where a later rename fails (an earlier run's files are as they were,
        a new member is removed)."""
        pairs = list(self.staged.values())
        replaced: list[tuple[Path | None, Path]] = []  # (the old file kept aside, or None; target)
        try:
            for tmp, path in pairs:
                kept = None
                if os.path.isfile(path) and not os.path.islink(path):
                    kept = _temporary(path)
                    try:
                        os.replace(path, kept)
                    except OSError as e:
                        os.unlink(kept)
                        raise _unwritable(path, e) from None
                replaced.append((kept, path))
                _publish(tmp, path)
        except RfmodelError:  # the set is absent rather than partial, the files it replaced back
            for kept, path in reversed(replaced):
                with contextlib.suppress(OSError):
                    if kept is not None:
                        os.replace(kept, path)
                    elif os.path.isfile(path):
                        os.unlink(path)
            for t, _ in pairs:
                with contextlib.suppress(OSError):
                    os.unlink(t)
            raise
        for kept, _ in replaced:
            if kept is not None:
                with contextlib.suppress(OSError):
                    os.unlink(kept)
        self.staged.clear()


_SET: contextvars.ContextVar[_OutputSet | None] = contextvars.ContextVar("rfmodel_output_set", default=None)


@contextlib.contextmanager
def output_set(members=(), *, folder=None, stale=()):
    """Write files as one set: while the block runs, every atomic write (:func:`write_text`,
    :func:`write_netcdf`, :func:`write_figure`, :func:`atomic_path` ...) to one of ``members`` or into
    ``folder`` (not its sub-folders) goes to a temporary name beside its target; when the block ends
    without an error all are renamed, then the ``stale`` files (those of an earlier run that this one does
    not rewrite) are removed.  An error in the block or in a rename removes every temporary (and the
    members already renamed): the set is complete or absent."""
    s = _OutputSet(members, folder)
    token = _SET.set(s)
    done = False
    try:
        yield s
        done = True
    finally:
        _SET.reset(token)
        if not done:
            s.discard()
    written = set(s.staged)
    s.commit()
    for p in stale:
        if os.path.abspath(p) not in written:
            with contextlib.suppress(OSError):
                os.unlink(p)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path in the target's directory; rename it onto ``path`` on success (inside an
    :func:`output_set` that holds ``path``: when the set ends).  An ``OSError`` in the block (a full
    disk) is one error naming ``path``, and the temporary is removed."""
    path = Path(path)
    _refuse_special(path)
    tmp = _temporary(path)
    try:
        try:
            yield tmp
        except OSError as e:
            raise _unwritable(path, e) from None
        s = _SET.get()
        if s is not None and s.holds(path):
            s.stage(tmp, path)
        else:
            _publish(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_bytes(path, data) -> Path:
    """Write ``data`` (bytes or a buffer) to ``path`` atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
    return Path(path)


def write_text(path, text: str) -> Path:
    """Write ``text`` (UTF-8, ``\n`` line ends) to ``path`` atomically, with the permissions the umask
    gives."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8", newline="\n")
    return Path(path)


def write_netcdf(ds, path) -> Path:
    """Save an xarray Dataset as NetCDF (h5netcdf engine), atomically.  The file is built in memory and
    then written as bytes: the HDF5 library never writes to the disk itself (it fails hard, not with an
    error, when the disk fills under it)."""
    ds = ds.copy()
    for k, v in list(ds.attrs.items()):  # NetCDF attributes must be str/number/array
        if isinstance(v, bool):
            ds.attrs[k] = int(v)
        elif v is None or isinstance(v, (dict, list, tuple)):
            ds.attrs[k] = str(v)
    try:
        data = ds.to_netcdf(engine="h5netcdf")
    except (OSError, RuntimeError) as e:
        raise _unwritable(Path(path), e) from None
    return write_bytes(path, data)


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
    """Save a Matplotlib figure (the format from the suffix, PNG without one), atomically."""
    import io

    buf = io.BytesIO()
    try:
        fig.savefig(buf, format=Path(path).suffix.lstrip(".") or "png", **kw)
    except OSError as e:
        raise _unwritable(Path(path), e) from None
    return write_bytes(path, buf.getbuffer())


#: the lock file :func:`folder_lock` keeps in the folder it holds
LOCK_NAME = ".rfmodel.lock"


def remove_temporaries(folder) -> int:
    """Remove the temporary files that an atomic write in ``folder`` left when its process was killed;
    the caller must own the folder (:func:`folder_lock`).  Returns how many were removed."""
    n = 0
    with contextlib.suppress(OSError):
        for e in os.scandir(folder):
            if _TEMPORARY.match(e.name) and e.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.unlink(e.path)
                    n += 1
    return n


@contextlib.contextmanager
def folder_lock(folder, what: str = "output folder", clean=()):
    """Own ``folder`` (created if missing) while the block runs: an exclusive ``flock`` on its lock file
    (:data:`LOCK_NAME`, which says the process and host holding it).  Another process holding it is one
    error naming that process; the operating system drops the lock of a process that dies, so the lock
    file of a killed run does not block.  On taking the lock, the temporary files left in ``folder`` and
    in its sub-folders ``clean`` by a killed run are removed.  Where the file system cannot lock, the
    folder is used without one."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not a POSIX system
        fcntl = None
    folder = Path(folder)
    lock = folder / LOCK_NAME
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _unwritable(folder, e) from None
    fd = None
    while fcntl is not None:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666 & ~_umask())
        except OSError as e:
            raise _unwritable(lock, e) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.read(fd, 200).decode("utf-8", "replace").strip()
            except OSError:
                holder = ""
            os.close(fd)
            raise RfmodelError(
                f"{folder}: another rfmodel run ({holder or 'a process'}) is using this {what}; wait for "
                f"it to end or choose another folder"
            ) from None
        except OSError:  # no locks on this file system
            os.close(fd)
            fd = None
            break
        try:  # the holder before may have removed the file between our open and lock: lock the one there
            if os.path.samestat(os.fstat(fd), os.stat(lock)):
                break
        except OSError:
            pass
        os.close(fd)
    try:
        if fd is not None:
            with contextlib.suppress(OSError):  # the lock is the flock; the text only names its holder
                os.ftruncate(fd, 0)
                os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode())
        for sub in (".", *clean):
            remove_temporaries(folder / sub)
        yield folder
    finally:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(lock)
            os.close(fd)
