"""Other named benchmarks of the papers: recipes and numpy references.

* ``mr_similarity``: the map stage of Mars' SimilarityScore (the STT-RAM register-file paper's SSC). The
  map records are laid out as the Mars runtime lays them out (key and value byte buffers indexed by an int4
  table); the key holds the matrix's device address, which the recipe computes from where the executor
  places the arrays: the matrix is the recipe's first array, at
  :data:`~rfmodel.workload.execute.launch.GLOBAL_BASE`. The framework's prefix sums (every record emits
  one 4-byte key and one 8-byte value) are given as data.
"""

from __future__ import annotations

import numpy as np

from rfmodel.workload.execute.launch import GLOBAL_BASE
from rfmodel.workload.execute.recipe import ArraySpec, Recipe, pointers, scalars

from ._common import EPS32, Registry, manifest_entry, same_arrays, shared_bytes, size

#: this module's recipes and their originals' inputs (gathered by the package)
FAMILY = Registry()

#: Mars SimilarityScore's map CTA, and the dynamic shared memory its runtime launches it with
_SS_TPB = 256
_SS_STAGE = _SS_TPB * 5 * 4
#: the dataset of Mars' run script (``SimilarityScore 1024 256``): 1024 documents of 256 features (the float4
#: loop's 64 trips)
_SS_DOCS, _SS_DIM = 1024, 256
#: Mapper's pointer parameters, in order (each names the recipe's array of the same name)
_SS_POINTERS = (
    "inputKeys",
    "inputVals",
    "inputOffsetSizes",
    "psKeySizes",
    "psValSizes",
    "psCounts",
    "keyValOffsets",
    "interKeys",
    "interVals",
    "interOffsetSizes",
    "curIndex",
)


@FAMILY.recipe(42.6667, "1024 documents x 256 features: 523776 pairs")
def _mr_similarity(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """Mapper's launch: 256 threads, one record (a pair of documents i < j) per thread, a 1-D grid over the
    n (n - 1) / 2 records. ``n`` documents of ``dim`` features: 24 x 16 at scale 1, the float4 loop reaching
    the dataset's 64 trips at scale 16 (384 x 256), the documents the dataset's 1024 at scale 43."""
    assert manifest_entry("mr_similarity")["threads_per_cta"] == _SS_TPB
    n = min(size(24, scale, 2), _SS_DOCS)
    dim = min(4 * size(4, scale), _SS_DIM)
    i, j = np.triu_indices(n, 1)
    recs = i.size
    nblocks = -(-recs // _SS_TPB)
    threads = nblocks * _SS_TPB
    r = np.arange(recs, dtype=np.int64)

    # where the executor will place the matrix: the first array, at the first global address
    arrays = {
        "matrix": ArraySpec("float32", (n * dim,), "randint", 0, 100),  # the original's rand() % 100
        "inputKeys": ArraySpec("uint64", (recs,)),
        **same_arrays(("inputVals", "inputOffsetSizes"), ArraySpec("int32", (recs, 4))),
        **same_arrays(("psKeySizes", "psValSizes", "psCounts"), ArraySpec("int32", (threads,))),
        "keyValOffsets": ArraySpec("int32", (threads, 2)),
        "interKeys": ArraySpec("float32", (recs,)),
        "interVals": ArraySpec("int32", (recs, 2)),
        "interOffsetSizes": ArraySpec("int32", (recs, 4)),
        "curIndex": ArraySpec("int32", (threads,)),
    }
    assert next(iter(arrays)) == "matrix"
    matrix_addr = GLOBAL_BASE
    vals = np.zeros((recs, 4), np.int32)
    vals[:, 0], vals[:, 1], vals[:, 2] = i, j, dim  # (doc1, doc2, dim, result = 0.0f)
    offs = np.stack([8 * r, np.full(recs, 8), 16 * r, np.full(recs, 16)], axis=1).astype(np.int32)
    per_thread = np.zeros(threads, np.int64)
    per_thread[:recs] = 1  # each record emits one pair: exclusive prefix sums of 1, 4 and 8 per thread
    counts = np.concatenate([[0], np.cumsum(per_thread)[:-1]])
    fixed = {
        "inputKeys": np.full(recs, matrix_addr, np.uint64),
        "inputVals": vals,
        "inputOffsetSizes": offs,
        "psKeySizes": 4 * counts,
        "psValSizes": 8 * counts,
        "psCounts": counts,
    }

    def ref(ins, sc):
        m = ins["matrix"].astype(np.float64).reshape(n, dim)
        dot = np.einsum("pk,pk->p", m[i], m[j])
        norm = np.sqrt(np.einsum("dk,dk->d", m, m))
        kv = ins["keyValOffsets"].copy()
        kv[:recs] = (4, 8)
        cur = ins["curIndex"].copy()
        cur[:recs] = 1
        return {
            "interKeys": dot / (norm[i] * norm[j]),
            "interVals": np.stack([i, j], axis=1),
            "interOffsetSizes": np.stack([4 * r, np.full(recs, 4), 8 * r, np.full(recs, 8)], axis=1),
            "keyValOffsets": kv,
            "curIndex": cur,
        }

    def tol(ins):
        # the features are integers below 100 and dim <= 256, so every partial sum of a.b, |a|^2, |b|^2 is
        # an integer below 256 * 99^2 < 2^24: exact in float32 in any order, fused or not. What rounds is
        # sqrtf twice (correctly rounded: CUDA's default -prec-sqrt=true), the product, and the division
        # (correctly rounded: -prec-div=true): score * (1+e4) / ((1+e1)(1+e2)(1+e3)), |e| <= 2^-24.
        u = EPS32
        return 0.0, np.abs(ref(ins, None)["interKeys"]) * ((1 + u) / (1 - u) ** 3 - 1)

    return Recipe(
        kernel="mr_similarity",
        grid=(nblocks,),
        block=(_SS_TPB,),
        params=pointers(*_SS_POINTERS) + [*scalars("i32", recordNum=recs, recordsPerTask=1, taskNum=threads)],
        arrays=arrays,
        outputs=["interKeys", "interVals", "interOffsetSizes", "keyValOffsets", "curIndex"],
        seed=71,
        shared_bytes=shared_bytes("mr_similarity") + _SS_STAGE,
        reference=ref,
        tolerance={"interKeys": tol},
        fixed=fixed,
    )
