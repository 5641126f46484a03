"""On-disk cache of derived data that is slow to recompute (workload profiles).

An entry is keyed by its inputs and by :func:`source_hash` of the package, so an edited model,
workload generator or kernel file never reuses a stale entry.  Entries are data files that cannot run code
(``.npz`` read without pickle, JSON), written atomically.  An entry that cannot be read for any reason
(missing, empty, truncated, damaged, of another format, unreadable) is recomputed and replaced; a cache
folder that cannot be read or written (read-only, full, a path under a file) costs only the recomputation,
never an error.

Location: ``$RFMODEL_CACHE_DIR`` when set (``off``, ``0`` or an empty value turn the cache off),
else ``$XDG_CACHE_HOME/rfmodel`` (default ``~/.cache/rfmodel``).  Deleting the folder is always safe.
numba's compiled code goes to ``$XDG_CACHE_HOME/rfmodel/numba`` (:func:`use_user_numba_cache`); code is
compiled into it or loaded from it under one lock across processes (:func:`compile_lock`), a first
compile of a long one says so (:func:`note_first_compile`), and the package's code compiles with Python's
garbage collector off (:func:`pause_collector_while_compiling`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
import time
import warnings
from functools import cache
from pathlib import Path

#: the package's folder (this module sits at its top)
PKG_DIR = Path(__file__).resolve().parent

#: compiled-code caches (Python's and numba's): never part of what decides a result
_SKIP_DIRS = {"__pycache__"}
_SKIP_SUFFIXES = (".pyc", ".nbi", ".nbc")
#: the papers' studies (``rfmodel.studies``) use the models and decide no result of them: an edit of a
#: study's report redoes none of its simulations (their keys carry the study's own inputs)
_SKIP_PREFIXES = ("studies/",)

#: when this process loaded the package: a file of it modified later may not be the code this process runs,
#: so a hash of the files on disk would key this process's results wrongly (the cache is then off)
_LOADED_AT = time.time()
_CHANGED: set[str] = set()
_WARNED = False


def cache_dir() -> Path | None:
    """The cache folder, or ``None`` when the cache is turned off."""
    env = os.environ.get("RFMODEL_CACHE_DIR")
    if env is not None:
        if env.strip().lower() in ("", "0", "off", "none", "false"):
            return None
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rfmodel"


#: compiled-code folders of other package sources kept beside the current one (:func:`use_user_numba_cache`)
NUMBA_KEEP = 8
#: seconds since a compiled-code folder was last used within which it is never pruned: a process that runs
#: for hours (a calibration, a study) keeps compiling a design's hooks into its folder while other checkouts
#: or edits start new ones
NUMBA_IN_USE_S = 86400.0


def code_digest() -> str:
    """Hash of the package's Python sources (every ``.py`` file below it, by path and content)."""
    h = hashlib.sha1()
    for f in sorted(PKG_DIR.rglob("*.py")):
        if _SKIP_DIRS & set(f.relative_to(PKG_DIR).parts):
            continue
        h.update(f.relative_to(PKG_DIR).as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def use_user_numba_cache() -> None:
    """Send numba's compiled-code cache to ``$XDG_CACHE_HOME/rfmodel/numba/<code digest>`` (default
    ``~/.cache/rfmodel/numba/...``) unless ``$NUMBA_CACHE_DIR`` names another folder, so that an installed
    package's source tree is never written to (read-only installs work).  The folder is named by
    :func:`code_digest`: numba checks a cached function against its own file only, so a compiled function
    that calls one of another file (``rfmodel.setassoc``'s from the simulator and the analytic schedule)
    would otherwise keep the callee's old code after an edit of it; any edit of the sources starts a fresh
    folder (the :data:`NUMBA_KEEP` most recently written others are kept).  Independent of
    ``$RFMODEL_CACHE_DIR``: turning the result cache off does not recompile the engines.  Must run before
    numba is first imported (``rfmodel/__init__.py`` does)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    try:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = Path(base) / "rfmodel" / "numba"
        folder = root / code_digest()
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError):  # no home or not writable: numba's own choice
        return
    if os.access(folder, os.W_OK):
        os.environ["NUMBA_CACHE_DIR"] = str(folder)
        try:
            os.utime(folder)  # in use now: another process's pruning leaves it alone (NUMBA_IN_USE_S)
        except OSError:
            pass
        _prune(root, folder)


@contextlib.contextmanager
def compile_lock():
    """Hold, across processes, the one lock under which this source tree's compiled code (the simulator's
    loop and a design's hooks, the SASS executor) is compiled or loaded from numba's cache.  numba's cache is
    not safe when two processes compile the same function at once (numba issues 4807 and 10128: an index
    written by one process can name the other's machine code, and the caller then jumps into the wrong
    function).  An exclusive ``flock`` on ``.rfmodel-compile.lock`` in numba's cache folder
    (``$NUMBA_CACHE_DIR``, :func:`use_user_numba_cache`), else on a file in the temporary folder named by
    this package's path; where no lock can be taken, none is held.  Whatever compiles under it compiles with
    the garbage collector off (:func:`pause_collector_while_compiling`)."""
    pause_collector_while_compiling()
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not a POSIX system
        yield
        return
    folder = os.environ.get("NUMBA_CACHE_DIR")
    if folder and os.path.isdir(folder):
        path = os.path.join(folder, ".rfmodel-compile.lock")
    else:
        tag = hashlib.sha1(str(PKG_DIR).encode()).hexdigest()[:16]
        path = os.path.join(tempfile.gettempdir(), f"rfmodel-compile-{os.getuid()}-{tag}.lock")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # no locks on this file system
            pass
        yield
    finally:
        os.close(fd)  # closing the file drops the lock


def numba_cached(dispatcher) -> bool:
    """Whether numba's cache holds compiled code of ``dispatcher``'s current source (an index whose stamp
    matches the file; True when that cannot be told)."""
    try:
        cache_file = dispatcher._cache._cache_file
        return os.path.exists(cache_file._index_path) and bool(cache_file._load_index())
    except Exception:  # numba internals: never fail a run over a message
        return True


@cache
def pause_collector_while_compiling() -> None:
    """Turn Python's cyclic garbage collector off while numba compiles one of this package's functions, and
    back as it was when the outermost such compile ends (a listener of numba's ``numba:compile`` event,
    installed once per process by :func:`compile_lock` and the analytic engine; ``import rfmodel`` loads no
    numba).  A compile builds hundreds of thousands of objects that live until it ends, and the collector,
    triggered by their count, walks them again and again (docs/simulator.md: a first simulation after an
    install took 116.1 CPU-s with it running and 103.4 without).  What a compile leaves for the collector is
    collected at its next pass.  Loading code from numba's cache is no compile and sends no such event."""
    import gc

    from numba.core import event

    package = __name__.split(".")[0]

    class CollectorOffWhileCompiling(event.Listener):
        depth = 0
        was = True

        def notify(self, ev) -> None:
            py_func = getattr(ev.data.get("dispatcher"), "py_func", None)
            if (getattr(py_func, "__module__", None) or "").split(".")[0] == package:
                super().notify(ev)

        def on_start(self, ev) -> None:
            if self.depth == 0:
                self.was = gc.isenabled()
                gc.disable()
            self.depth += 1

        def on_end(self, ev) -> None:
            self.depth -= 1
            if self.depth == 0 and self.was:
                gc.enable()

    event.register("numba:compile", CollectorOffWhileCompiling())


#: what :func:`note_first_compile` has announced in this process
_NOTED: set[str] = set()


def note_first_compile(dispatcher, what: str, duration: str) -> bool:
    """Say on stderr that ``what`` is being compiled (``rfmodel: compiling <what> (once; <duration>) ...``)
    where this process has not compiled or loaded ``dispatcher`` yet and numba's cache holds no code of its
    current source (:func:`numba_cached`): a first run after an install or an edit, which is otherwise a
    silent wait.  Once per ``what`` and process; True when it spoke."""
    if what in _NOTED or getattr(dispatcher, "signatures", None) or numba_cached(dispatcher):
        return False
    _NOTED.add(what)
    print(f"rfmodel: compiling {what} (once; {duration}) ...", file=sys.stderr, flush=True)
    return True


def _prune(root: Path, current: Path) -> None:
    """Remove all but the :data:`NUMBA_KEEP` most recently written or used other compiled-code folders of
    ``root`` (those named by a digest; anything else there is left alone), and none used in the last
    :data:`NUMBA_IN_USE_S` seconds (a running process may still compile into it)."""
    import shutil
    import time

    try:
        dirs = [
            p
            for p in root.iterdir()
            if p != current
            and p.is_dir()
            and len(p.name) == 12
            and all(c in "0123456789abcdef" for c in p.name)
        ]
        dirs.sort(key=lambda p: p.stat().st_mtime)
        recent = time.time() - NUMBA_IN_USE_S
        for p in dirs[: max(len(dirs) - NUMBA_KEEP, 0)]:
            if p.stat().st_mtime < recent:
                shutil.rmtree(p, ignore_errors=True)
    except OSError:  # another process pruning at once, or a read-only folder: nothing to do
        pass


#: the package sources a workload's trace depends on (the generators and kernels, the control-flow analysis
#: that expands them, the occupancy that sizes an SM's share, the limits they are checked against, the static
#: program and trace forms they build, and the errors those raise)
TRACE_SOURCES = ("workload", "compiler", "spec", "limits.py", "ir.py", "trace.py", "errors.py", "lazy.py")
#: the package sources a simulation's result depends on: its traces', the simulator's, the designs' hooks and
#: passes, and the modules at the package's top that the simulator calls (the set-associative lookup of its
#: caches); a result cached under their hash is simulated again after an edit of any of them
SIM_SOURCES = (*TRACE_SOURCES, "sim", "designs", "setassoc.py", "datafile.py", "io.py")
#: the package sources an analytic workload profile depends on: its trace's, the analytic engine that builds
#: and keeps it, and every module those import (tests/test_layers.py checks the closure); a design, the
#: simulator or the calibration data edited leaves the profiles on disk valid
PROFILE_SOURCES = (
    *TRACE_SOURCES,
    "analytic",
    "setassoc.py",
    "datafile.py",
    "io.py",
    "cache.py",
    "version.py",
    "__init__.py",
    "results.py",
    "energy",
)


@cache
def source_hash(*subdirs: str, exclude: tuple[str, ...] = ()) -> str:
    """Hash of the package's files under ``subdirs`` (folders or single files, relative to the package; all
    of the package without any), skipping compiled-code caches and the relative paths in ``exclude``: what
    decides a cached result."""
    pkg = PKG_DIR
    h = hashlib.sha1()
    for sub in subdirs or ("",):
        top = pkg / sub
        for f in [top] if top.is_file() else sorted(top.rglob("*")):
            rel = f.relative_to(pkg).as_posix()
            skip = _SKIP_DIRS & set(f.relative_to(pkg).parts) or f.suffix in _SKIP_SUFFIXES
            if skip or not f.is_file() or rel.startswith((*exclude, *_SKIP_PREFIXES)):
                continue
            h.update(rel.encode())
            h.update(f.read_bytes())
            if f.stat().st_mtime > _LOADED_AT:
                _CHANGED.add(rel)
    return h.hexdigest()[:12]


def sources_changed() -> list[str]:
    """Package files a :func:`source_hash` of this process found modified after the package was loaded
    (the process may run their older code: its results are not cached)."""
    return sorted(_CHANGED)


def entry_path(kind: str, key: str, suffix: str) -> Path | None:
    """Where the entry ``key`` of ``kind`` lives (``None`` with the cache off)."""
    root = cache_dir()
    if root is None:
        return None
    global _WARNED
    if _CHANGED:
        if not _WARNED:
            _WARNED = True
            names = ", ".join(sorted(_CHANGED)[:3]) + (", ..." if len(_CHANGED) > 3 else "")
            warnings.warn(
                f"rfmodel: package files changed after this process loaded them ({names}); results of this "
                "process are not cached",
                stacklevel=2,
            )
        return None
    return root / kind / f"{key}{suffix}"


#: entries shipped with the package (read-only), by kind: those the default ``rfmodel optimize`` builds, so a
#: new install's first run finds them (``calib/ship_profiles.py`` writes them; an entry whose key the sources
#: no longer give is simply not found)
SHIPPED_DIR = PKG_DIR / "data" / "shipped"


def shipped_entry(path: Path | None) -> Path | None:
    """The entry the package ships under the same kind and key as the cache's ``path`` (:func:`keyed_entry`),
    or ``None`` (no such file, or the cache is off)."""
    if path is None:
        return None
    shipped = SHIPPED_DIR / path.parent.name / path.name
    return shipped if shipped.is_file() else None


def keyed_entry(kind: str, parts, suffix: str) -> Path | None:
    """Where the entry of ``kind`` keyed by the JSON of ``parts`` (its inputs and a source hash) lives
    (``None`` with the cache off)."""
    import json

    blob = json.dumps(parts, default=str)
    return entry_path(kind, hashlib.sha1(blob.encode()).hexdigest()[:24], suffix)


def read_entry(path: Path | None, load):
    """``load(path)`` of a cached entry, or ``None`` when there is none or it cannot be used: whatever a
    missing, empty, truncated or damaged file, a foreign format or an unreadable folder makes ``load`` raise
    (``BadZipFile``, ``EOFError``, ``zlib.error``, a wrong field ...), the caller recomputes the entry and
    :func:`write_entry` replaces it."""
    if path is None:
        return None
    try:
        if not path.is_file():
            return None
        return load(path)
    except Exception:  # noqa: BLE001 - a cache entry that cannot be used is recomputed, never an error
        return None


def write_with(path: Path | None, save) -> None:
    """``save(path)``; a cache folder that cannot be written (read-only, full, under a file) costs only the
    recomputation next time."""
    from rfmodel.errors import RfmodelError

    if path is None:
        return
    try:
        save(path)
    except (OSError, RfmodelError):
        pass


def write_entry(path: Path | None, obj) -> None:
    """``obj.save(path)`` (:func:`write_with`)."""
    write_with(path, obj.save)
