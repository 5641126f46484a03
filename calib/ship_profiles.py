"""Ship the analytic profiles the default ``rfmodel optimize`` builds with the package
(``rfmodel/data/shipped/profiles``), so that a new install's first run reads them instead of executing every
built-in kernel for its traces and list-scheduling it (the cold run's largest cost).

    python calib/ship_profiles.py        # the default run on a fresh cache: a few CPU-minutes

A shipped profile is found only under the key its sources give (``rfmodel.cache.PROFILE_SOURCES``): after an
edit of those sources the package's copies are not found (the first run builds them as before) until this
script is run again.  The shipped copies are compressed (``np.savez_compressed``: the arrays read back
identical; most of a profile's tables are zeros).  It prints the entries written and their size.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RFMODEL_CACHE_DIR"] = str(Path(tmp) / "cache")
        import rfmodel.cache as cache
        from rfmodel.optimize import optimize

        shipped = cache.SHIPPED_DIR / "profiles"
        cache.SHIPPED_DIR = Path(tmp) / "none"  # build every profile afresh, whatever the package ships now
        print("running the default optimize on a fresh cache ...", flush=True)
        optimize(store=False)
        built = sorted((Path(tmp) / "cache" / "profiles").glob("*.npz"))
        if shipped.exists():
            shutil.rmtree(shipped)
        shipped.mkdir(parents=True)
        for f in built:  # compressed (the cache's own are not): the same arrays, a third of the bytes
            with np.load(f, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            np.savez_compressed(shipped / f.name, **arrays)
        size = sum((shipped / f.name).stat().st_size for f in built)
        print(f"wrote {len(built)} profiles ({size / 1024:.0f} KiB) to {shipped.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
