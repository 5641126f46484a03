"""Checked data files: what rfmodel writes to read back later (optimize checkpoints, the evaluation store,
parsed technology rows in the cache) in a form that cannot run code when it is read.

A checked file is a NumPy ``.npz`` archive of plain arrays (never object arrays: it is read with
``allow_pickle=False``) and one JSON header naming the kind of file, its format version and the SHA-256 of
everything else in it (the arrays' names, types, shapes and bytes, and the JSON metadata).  The kind, the
version and the checksum are checked before anything in the file is used: a file that fails a check is one
:class:`~rfmodel.errors.RfmodelError` naming the file and what is wrong.  Files are written atomically.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from rfmodel.errors import RfmodelError

#: the archive member that holds the header
HEADER = "__meta__"


def _digest(kind: str, version: int, meta_json: str, arrays: dict) -> str:
    h = hashlib.sha256()
    h.update(json.dumps([kind, version, meta_json]).encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(json.dumps([name, a.dtype.str, list(a.shape)]).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def write_checked(path, kind: str, version: int, arrays: dict, meta: dict) -> None:
    """Write ``arrays`` (name -> array of numbers, booleans or text) and the JSON-able ``meta`` as a checked
    file of ``kind`` and format ``version``, atomically.  A value that is not plain data is a ``TypeError``
    (never written)."""
    from rfmodel.io import write_npz

    arrays = {str(k): np.asarray(v) for k, v in arrays.items()}
    for k, a in arrays.items():
        if a.dtype.hasobject or k == HEADER:
            raise TypeError(f"{k}: not a plain data array ({a.dtype})")
    meta_json = json.dumps(meta, sort_keys=True)  # TypeError for anything JSON cannot hold
    header = {
        "kind": kind,
        "version": int(version),
        "sha256": _digest(kind, int(version), meta_json, arrays),
        "meta": meta_json,
    }
    write_npz(path, arrays, header)


def read_checked(path, kind: str, version: int) -> tuple[dict, dict]:
    """``(meta, arrays)`` of a checked file of ``kind`` and format ``version``; one
    :class:`~rfmodel.errors.RfmodelError` naming the file when it cannot be read, is not such a file, has
    another format version or its checksum does not match its content (damaged or edited)."""
    import stat

    path = Path(path)
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a pipe would block the read, a device never end
            what = "not a regular file (a folder, device or pipe)"
            raise RfmodelError(f"{path}: {what}; expected a {kind} file")
        with np.load(path, allow_pickle=False) as z:
            if not hasattr(z, "files") or HEADER not in z.files:
                raise ValueError("no header")
            header = json.loads(str(z[HEADER][()]))
            arrays = {k: z[k] for k in z.files if k != HEADER}
    except RfmodelError:
        raise
    except OSError as e:
        raise RfmodelError(f"{path}: cannot read it: {e.strerror or e}") from None
    except Exception:  # noqa: BLE001 - whatever a damaged or foreign file raises in the reader
        why = "damaged, truncated or of another kind"
        raise RfmodelError(f"{path}: not a readable {kind} file ({why})") from None
    if not isinstance(header, dict) or header.get("kind") != kind:
        found = header.get("kind") if isinstance(header, dict) else None
        found = f" (a {found!r} file)" if isinstance(found, str) else ""
        raise RfmodelError(f"{path}: not a {kind} file{found}")
    if header.get("version") != version:
        raise RfmodelError(
            f"{path}: {kind} format version {header.get('version')!r}; this rfmodel reads version {version}"
        )
    meta_json = header.get("meta")
    if not isinstance(meta_json, str) or header.get("sha256") != _digest(kind, version, meta_json, arrays):
        raise RfmodelError(f"{path}: its checksum does not match its content (damaged or edited)")
    try:
        meta = json.loads(meta_json)
    except ValueError:
        raise RfmodelError(f"{path}: its metadata is not JSON") from None
    return meta, arrays
