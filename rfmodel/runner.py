"""Job runners: independent jobs run one after the other, in local worker processes, or on a Dask cluster.

A runner has one method, :meth:`Runner.run` ``(fn, jobs)``, which yields ``(index, result)`` as each job
finishes (in order for the serial runner); ``fn`` and the jobs must be picklable for the others.  A job's
result never depends on where it ran, so the runners give the same answers; the warnings a job raises in a
worker come back with its result and are said once by the caller's process (not once per worker).

* :class:`SerialRunner`: in this process (progress callbacks inside a job reach the caller);
* :class:`ProcessRunner`: ``workers`` local processes (``concurrent.futures``);
* :class:`DaskRunner`: an existing Dask cluster (``tcp://host:port``, or a ``distributed.Client``); Dask's
  ``distributed`` package is an optional dependency (``pip install rfmodel[dask]``).

:func:`make_runner` picks one from the command line's ``--workers`` and ``--scheduler``; :class:`ResultLog`
keeps finished jobs' results as JSON lines so that a rerun does only what is missing: the one resume
mechanism of the simulator sweeps (``rfmodel calibrate`` and the studies).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed

from rfmodel.errors import RfmodelError, expect_int


class Runner:
    """Where jobs run (see the module docstring)."""

    name = "runner"

    def run(self, fn: Callable, jobs: Iterable) -> Iterator[tuple[int, object]]:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.name


class SerialRunner(Runner):
    name = "serial"

    def run(self, fn, jobs):
        for i, job in enumerate(jobs):
            yield i, fn(job)


def _keeping_warnings(fn, job):
    """``(fn(job), the warnings it raised as (category name, message))``: a worker's warnings travel back with
    its result, and the caller says each once (:func:`_relay`), not once per worker process."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(job)
    seen = dict.fromkeys((w.category.__name__, str(w.message)) for w in caught)
    return out, list(seen)


#: the warnings the runners have said in this process (:func:`_relay`)
_RELAYED: set = set()


def _relay(notes) -> None:
    """Say each warning of a worker's result once in this process (a built-in warning category by its name,
    anything else as a ``UserWarning``)."""
    import builtins
    import warnings

    for name, message in notes:
        if (name, message) in _RELAYED:
            continue
        _RELAYED.add((name, message))
        cat = getattr(builtins, name, None)
        cat = cat if isinstance(cat, type) and issubclass(cat, Warning) else UserWarning
        warnings.warn(message, cat, stacklevel=3)


def _die_with_parent() -> None:
    """Worker initializer: on Linux, the worker is killed when the process that started it dies (a
    ``kill -9`` of a run must not leave its workers computing and writing checkpoints)."""
    import ctypes
    import signal
    import sys

    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except OSError:
            pass


class ProcessRunner(Runner):
    def __init__(self, workers: int):
        from rfmodel.limits import MAX_WORKERS

        self.workers = expect_int("workers", workers, low=1, high=MAX_WORKERS)
        self.name = f"{workers} local processes"

    def run(self, fn, jobs):
        import multiprocessing
        from concurrent.futures.process import BrokenProcessPool

        jobs = list(jobs)
        workers = min(self.workers, max(len(jobs), 1))
        # fresh interpreters ("spawn"), not forks: a fork of a process that has used OpenMP (the
        # hypervolume's library does) aborts, and a fork would share the parent's locks and threads
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_die_with_parent) as pool:
            futures = {pool.submit(_keeping_warnings, fn, job): i for i, job in enumerate(jobs)}
            try:
                for fut in as_completed(futures):
                    out, notes = fut.result()
                    _relay(notes)
                    yield futures[fut], out
            except BrokenProcessPool as e:
                msg = f"a worker process died ({e}); run again with --workers 1 to see why"
                raise RfmodelError(msg) from None


#: how long a Dask scheduler may take to accept a connection, and then to greet it
CONNECT_TIMEOUT_S = 10


def _expect_a_greeting(address, timeout: float) -> None:
    """A Dask scheduler greets a new TCP connection at once (its half of the handshake, sent before it reads
    anything), while the Dask client waits for that greeting with no time limit: a TCP service that accepts
    and then says nothing would hang it.  So a ``tcp://`` address is tried here first: one clean error when
    nothing comes within ``timeout`` seconds.  Other transports and unreachable addresses are left to the
    client (which has its own connect timeout)."""
    import select
    import socket

    if not isinstance(address, str):
        return
    try:
        from distributed.comm import parse_address, parse_host_port

        scheme, loc = parse_address(address)
        if scheme != "tcp":
            return
        host, port = parse_host_port(loc)
    except (ValueError, TypeError):
        return
    try:
        conn = socket.create_connection((host, port), timeout=timeout)
    except OSError:
        return  # the client says why, in its words
    with conn:
        ready, _, _ = select.select([conn], [], [], timeout)
    if not ready:
        raise RfmodelError(
            f"{address!r} is not a Dask scheduler: it accepted the connection and sent "
            f"nothing in {timeout:g} s (a scheduler greets at once)"
        )


class DaskRunner(Runner):
    def __init__(self, scheduler):
        try:
            from distributed import Client
        except ImportError:
            msg = "a Dask scheduler needs the 'distributed' package: pip install rfmodel[dask]"
            raise RfmodelError(msg) from None
        if isinstance(scheduler, Client):
            self.client, self._own = scheduler, False
        else:
            _expect_a_greeting(scheduler, CONNECT_TIMEOUT_S)
            try:
                self.client, self._own = Client(scheduler, timeout=f"{CONNECT_TIMEOUT_S}s"), True
            except (OSError, TimeoutError, ValueError) as e:
                raise RfmodelError(f"cannot reach the Dask scheduler {scheduler!r}: {e}") from None
            except Exception as e:  # noqa: BLE001 - a service that answers but is not a Dask scheduler
                # (its bytes read as a Dask message: any error, up to MemoryError for an absurd length)
                raise RfmodelError(
                    f"{scheduler!r} is not a Dask scheduler (its answer could not be read: "
                    f"{type(e).__name__})"
                ) from None
        self.name = f"Dask at {self.client.scheduler.address}"

    def run(self, fn, jobs):
        from distributed import as_completed as dask_completed

        jobs = list(jobs)
        futures = self.client.map(functools.partial(_keeping_warnings, fn), jobs, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for fut, (result, notes) in dask_completed(futures, with_results=True):
                _relay(notes)
                yield index[fut.key], result
        finally:
            if self._own:
                self.client.close()


def _last_line_start(f, end: int) -> int:
    """The offset at which the last line of the binary file ``f`` (``end`` bytes long) starts."""
    pos = end
    while pos > 0:
        step = min(pos, 4096)
        f.seek(pos - step)
        i = f.read(step).rfind(b"\n")
        if i >= 0:
            return pos - step + i + 1
        pos -= step
    return 0


class ResultLog:
    """Finished jobs' results kept one JSON line each in ``path``, keyed: a later run reads them back and runs
    only what is missing (:meth:`run`).  ``done`` maps each key to its record (which carries the key as
    ``"key"``).

    * A damaged line (cut short by an interrupted run, or a record ``check`` rejects) is reported with a
      warning and ignored: its job runs again.  The next append removes a cut last line first.
    * ``legacy``: a folder of one ``<key>.json`` file per finished job (an older layout of the same records).
      Its records that the log lacks are copied into the log when it is opened; the files are not needed
      afterwards.
    * Only the process that holds the log writes it (workers return their results); each record is one
      ``write`` of one whole line, so an interruption loses at most the record being written.
    """

    def __init__(self, path, *, legacy=None, check: Callable[[dict], bool] | None = None):
        from pathlib import Path

        self.path = Path(path)
        self.check = check
        self.done: dict[str, dict] = {}
        if self.path.exists():
            self._read()
        if legacy is not None:
            self._adopt(Path(legacy))

    def _valid(self, r) -> bool:
        return isinstance(r, dict) and (self.check is None or bool(self.check(r)))

    def _read(self) -> None:
        import json
        import warnings

        bad = []  # (line number, its key when it can be read)
        text = self.path.read_text(encoding="utf-8", errors="replace")
        for n, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                key = r["key"]
            except (json.JSONDecodeError, KeyError, TypeError, RecursionError):
                bad.append((n, None))
                continue
            try:
                if self._valid(r):
                    self.done[key] = r
                    continue
            except TypeError:  # an unhashable key
                key = None
            bad.append((n, key))
        for n, key in bad:
            if key is None or key not in self.done:  # not since redone
                warnings.warn(
                    f"{self.path}, line {n}: damaged record, ignored (its job runs again)", stacklevel=4
                )

    def _adopt(self, folder) -> None:
        """The records of ``folder``'s ``<key>.json`` files that the log lacks, appended to it."""
        import json
        import warnings

        found = []
        for p in sorted(folder.glob("*.json")) if folder.is_dir() else ():
            key = p.stem
            if key.startswith(".") or key in self.done:  # ".tmp-*": an unfinished atomic write
                continue
            try:
                r = json.loads(p.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                r = None
            if not self._valid(r):
                warnings.warn(f"{p}: damaged record, ignored (its job runs again)", stacklevel=3)
                continue
            found.append({**r, "key": key})
        self._append(found)

    def __contains__(self, key) -> bool:
        return key in self.done

    def __getitem__(self, key) -> dict:
        return self.done[key]

    def _append(self, records: list[dict]) -> None:
        import json

        if not records:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = memoryview("".join(json.dumps(r) + "\n" for r in records).encode("utf-8"))
        with self.path.open("ab+", buffering=0) as f:
            end = f.seek(0, 2)
            if end > 0:
                f.seek(end - 1)
                if f.read(1) != b"\n":
                    # a line cut short by an interrupted run (reported when the log was read) goes; else the
                    # first record would continue it and be lost with it
                    f.truncate(_last_line_start(f, end))
            while text:  # unbuffered: whole lines, in one write unless the system cuts it
                text = text[f.write(text) :]
        for r in records:
            self.done[r["key"]] = r

    def add(self, key: str, record: dict) -> dict:
        """Keep ``record`` under ``key`` (appended to the file at once)."""
        record = {**record, "key": key}
        self._append([record])
        return record

    def run(self, runner: Runner, fn: Callable, jobs: dict) -> Iterator[tuple[str, dict]]:
        """``fn`` on the ``{key: job}`` not yet done, on ``runner``; yields ``(key, record)`` as each is
        kept."""
        keys = [k for k in jobs if k not in self.done]
        for i, rec in runner.run(fn, [jobs[k] for k in keys]):
            yield keys[i], self.add(keys[i], rec)


def make_runner(workers: int | None = None, scheduler=None) -> Runner:
    """A Dask runner for ``scheduler``, else local processes for ``workers`` > 1, else the serial runner."""
    if scheduler is not None:
        return DaskRunner(scheduler)
    if workers is not None and workers != 1:
        return ProcessRunner(workers)
    return SerialRunner()
