"""Rodinia 3.1 (CUDA) kernels of the papers' benchmarks: recipes and numpy references.

Each recipe's default problem is a small version of the benchmark's standard input (``scale`` grows it
towards the size the papers run; the docstring of each recipe says which scale reaches it).  Graph and tree
inputs are built here from a seeded generator and given as ``fixed`` arrays.
"""

from __future__ import annotations

import numpy as np

from rfmodel.workload.execute.launch import Param
from rfmodel.workload.execute.recipe import ArraySpec, Recipe, pointers, scalars

from ._common import EPS32, Registry, check, manifest_entry, same_arrays, shared_bytes, size, uniform_arrays

#: this module's recipes and their originals' inputs (gathered by the package)
FAMILY = Registry()

# ---- bfs -------------------------------------------------------------------------------------------


def _bfs_graph(n: int, seed: int):
    """A random undirected graph in the manner of Rodinia's graph generator: each node draws 2 to 4 edges
    to random nodes, each edge stored in both directions (about 6 neighbours a node); CSR by source."""
    rng = np.random.default_rng(seed)
    k = rng.integers(2, 5, n)
    src = np.repeat(np.arange(n), k)
    dst = rng.integers(0, n, src.size)
    a = np.concatenate([src, dst])
    b = np.concatenate([dst, src])
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    count = np.bincount(a, minlength=n)
    first = np.concatenate([[0], np.cumsum(count)[:-1]])
    nodes = np.stack([first, count], axis=1).astype(np.int32).reshape(-1)
    return nodes, b.astype(np.int32), first, count


def _bfs_levels(n, first, count, edges, source=0):
    """BFS levels from ``source`` (-1: unreached)."""
    level = np.full(n, -1, np.int64)
    level[source] = 0
    front = np.array([source])
    d = 0
    while front.size:
        nb = np.concatenate([edges[first[v] : first[v] + count[v]] for v in front])
        nb = np.unique(nb)
        nb = nb[level[nb] < 0]
        d += 1
        level[nb] = d
        front = nb
    return level


def _bfs_state(scale: float):
    """The graph and the BFS state at its widest level L (the frontier is the nodes of level L, the
    visited ones those of level <= L): the state the first kernel sees at the step that does most work."""
    n = size(4096, scale, 64)
    nodes, edges, first, count = _bfs_graph(n, 7)
    level = _bfs_levels(n, first, count, edges)
    widest = int(np.argmax(np.bincount(level[level >= 0])))
    frontier = (level == widest).astype(np.uint8)
    seen = ((level >= 0) & (level <= widest)).astype(np.uint8)
    cost = np.where(seen == 1, level, -1).astype(np.int32)
    return n, nodes, edges, first, count, frontier, seen, cost


@FAMILY.recipe(16, "graph65536.txt: 65536 nodes, about 6 edges a node")
def _rd_bfs_1(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """Kernel's launch: 512 threads, one per node, ceil(n / 512) CTAs (the grid follows the graph; ``ctas``
    is not used).  Default 4096 nodes; scale 16 is graph65536, the papers' input."""
    block = manifest_entry("rd_bfs_1")["threads_per_cta"]
    n, nodes, edges, first, count, frontier, seen, cost = _bfs_state(scale)

    def ref(ins, sc):
        f = ins["frontier"].astype(bool)
        nxt = ins["next_frontier"].copy()
        lev = ins["level"].copy()
        unseen = ins["seen"] == 0
        for v in np.flatnonzero(f):
            w = edges[first[v] : first[v] + count[v]]
            w = w[unseen[w]]
            lev[w] = lev[v] + 1
            nxt[w] = 1
        return {"frontier": np.zeros_like(ins["frontier"]), "next_frontier": nxt, "level": lev}

    return Recipe(
        kernel="rd_bfs_1",
        grid=(-(-n // block),),
        block=(block,),
        params=[
            *pointers("nodes", "edges", "frontier", "next_frontier", "seen", "level"),
            *scalars("i32", n_nodes=n),
        ],
        arrays={
            "nodes": ArraySpec("int32", (2 * n,)),
            "edges": ArraySpec("int32", (edges.size,)),
            **same_arrays(("frontier", "next_frontier", "seen"), ArraySpec("uint8", (n,))),
            "level": ArraySpec("int32", (n,)),
        },
        seed=60,
        **check(("frontier", "next_frontier", "level"), ref),
        fixed={"nodes": nodes, "edges": edges, "frontier": frontier, "seen": seen, "level": cost},
    )


@FAMILY.recipe(16, "graph65536.txt: 65536 nodes")
def _rd_bfs_2(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """Kernel2's launch: 512 threads, one per node, ceil(n / 512) CTAs, right after the first kernel's step
    at the widest level (the next level is marked, the frontier is empty).  Default 4096 nodes; scale 16 is
    graph65536."""
    block = manifest_entry("rd_bfs_2")["threads_per_cta"]
    n, nodes, edges, first, count, frontier, seen, cost = _bfs_state(scale)
    nxt = np.zeros(n, np.uint8)
    for v in np.flatnonzero(frontier):
        w = edges[first[v] : first[v] + count[v]]
        nxt[w[seen[w] == 0]] = 1

    def ref(ins, sc):
        up = ins["next_frontier"].astype(bool)
        f = ins["frontier"].copy()
        s = ins["seen"].copy()
        f[up] = 1
        s[up] = 1
        more = ins["more_levels"].copy()
        if up.any():
            more[:] = 1
        return {
            "frontier": f,
            "next_frontier": np.zeros_like(ins["next_frontier"]),
            "seen": s,
            "more_levels": more,
        }

    return Recipe(
        kernel="rd_bfs_2",
        grid=(-(-n // block),),
        block=(block,),
        params=[*pointers("frontier", "next_frontier", "seen", "more_levels"), *scalars("i32", n_nodes=n)],
        arrays={
            **same_arrays(("frontier", "next_frontier", "seen"), ArraySpec("uint8", (n,))),
            "more_levels": ArraySpec("uint8", (1,)),
        },
        seed=61,
        **check(("frontier", "next_frontier", "seen", "more_levels"), ref),
        fixed={"next_frontier": nxt, "seen": seen},
    )


# ---- b+tree ----------------------------------------------------------------------------------------

#: the tree's order (key slots per node, threads per CTA) and one node's size in 32-bit words: self,
#: child[257], key[257], the leaf flag (a byte padded to a word), the key count
BT_ORDER = 256
BT_WORDS = 1 + (BT_ORDER + 1) + (BT_ORDER + 1) + 1 + 1
_IMIN, _IMAX = -(2**31), 2**31 - 1


def _bt_chunks(n: int, lo: int, hi: int, rng) -> list[int]:
    """Split ``n`` items into consecutive groups of ``lo`` to ``hi`` items (the last one may be smaller)."""
    out = []
    while n > 0:
        k = min(n, int(rng.integers(lo, hi + 1)))
        out.append(k)
        n -= k
    return out


def _bt_tree(n_records: int, seed: int):
    """A B+ tree of order 256 over ``n_records`` distinct sorted keys, flattened as the original does: nodes
    in breadth-first order from the root (node 0); a node with ``m`` keys has slot 0 = INT_MIN, slots 1..m
    its keys, INT_MAX above; an inner node's child[i] is the node of slot i's subtree, a leaf's child[i]
    the record index of key[i] (records in key order), child[m+1] the node's own index + 1 (as the
    original). Nodes are 128 to 255 keys full (the root: whatever is left).

    Returns (words of the node array, keys, record values, height, the leaf each key range leads to)."""
    rng = np.random.default_rng(seed)
    keys = np.sort(rng.choice(2 * n_records, n_records, replace=False)).astype(np.int64)
    values = rng.integers(0, 1 << 30, n_records).astype(np.int32)
    # levels bottom-up: each node is (first key of its subtree, its keys, its children as indices into the
    # level below or, for a leaf, record indices)
    leaves, at = [], 0
    for k in _bt_chunks(n_records, 128, 255, rng):
        leaves.append((int(keys[at]), list(keys[at : at + k]), list(range(at, at + k))))
        at += k
    levels = [leaves]
    while len(levels[-1]) > 1:
        below, up, at = levels[-1], [], 0
        for k in _bt_chunks(len(below), 129, 256, rng) if len(below) > 256 else [len(below)]:
            kids = list(range(at, at + k))
            up.append((below[at][0], [below[j][0] for j in kids[1:]], kids))
            at += k
        levels.append(up)
    levels = levels[::-1]  # root first
    height = len(levels) - 1
    base = np.cumsum([0] + [len(lv) for lv in levels])
    n_nodes = int(base[-1])
    w = np.zeros((n_nodes, BT_WORDS), np.int64)
    for d, lv in enumerate(levels):
        for j, (_, ks, kids) in enumerate(lv):
            i = base[d] + j
            m = len(ks) if d == height else len(kids) - 1
            row = w[i]
            row[0] = i
            child, key = row[1 : 2 + BT_ORDER], row[2 + BT_ORDER : 3 + 2 * BT_ORDER]
            key[:] = _IMAX
            key[0] = _IMIN
            if d == height:  # a leaf: slots 1..m hold its keys and their records
                key[1 : m + 1] = ks
                child[1 : m + 1] = kids
            else:  # slot 0 .. m: the children, slots 1..m the first keys of children 1..m
                key[1 : m + 1] = ks
                child[0 : m + 1] = base[d + 1] + np.array(kids)
            child[m + 1] = i + 1
            row[3 + 2 * BT_ORDER] = 1 if d == height else 0
            row[4 + 2 * BT_ORDER] = m + 2
    return w.astype(np.int32).reshape(-1), keys, values, height, n_nodes


def _bt_descend(words, n_nodes, height, q):
    """The node the kernels' cursor ends at for query key ``q``: ``height`` steps down from the root."""
    w = words.reshape(-1, BT_WORDS).astype(np.int64)
    at = 0
    for _ in range(height):
        key = w[at, 2 + BT_ORDER : 3 + 2 * BT_ORDER]
        s = int(np.flatnonzero((key[:BT_ORDER] <= q) & (key[1 : BT_ORDER + 1] > q))[0])
        c = int(w[at, 1 + s])
        if c < n_nodes:
            at = c
    return at


def _bt_leaves(words, n_nodes, height, queries) -> np.ndarray:
    """The nodes the kernels' cursors end at for the query keys ``queries`` (:func:`_bt_descend` each)."""
    return np.array([_bt_descend(words, n_nodes, height, int(x)) for x in queries], np.int64)


def _bt_rank_hit(keys, q):
    """The ranks of the query keys ``q`` in the sorted ``keys`` and whether each is one of them."""
    r = np.searchsorted(keys, q)
    return r, (r < keys.size) & (keys[np.minimum(r, keys.size - 1)] == q)


def _bt_recipe(name, nq, words, height, n_nodes, queried: dict, outputs, seed, ref, fixed: dict) -> Recipe:
    """The b+tree kernels' launch: one CTA of BT_ORDER threads per query (``nq``); the parameters: the
    tree's height, the tree (``words``), its node count, then a pointer to each of ``queried``'s arrays in
    order (``fixed``: the data of those given)."""
    assert manifest_entry(name)["threads_per_cta"] == BT_ORDER
    return Recipe(
        kernel=name,
        grid=(nq,),
        block=(BT_ORDER,),
        params=[
            *scalars("i64", levels=height),
            *pointers("tree"),
            *scalars("i64", n_nodes=n_nodes),
            *pointers(*queried),
        ],
        arrays={"tree": ArraySpec("int32", (words.size,)), **queried},
        outputs=outputs,
        seed=seed,
        reference=ref,
        fixed={"tree": words, **fixed},
    )


def _bt_records(scale: float) -> int:
    """Records of the tree: 6000 by default (height 1); scale 16 gives height 2, the height of the papers'
    input (mil.txt, 1M records)."""
    return size(6000, scale, 300)


@FAMILY.recipe(166.6667, "mil.txt: 1M keys, order 256, height 2; k 10000 queries")
def _rd_btree_findk(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """findK's launch: one CTA of 256 threads (the order) per query; 64 queries by default, 64 * scale
    (at most the original's 10000); ``ctas`` is not used.  Queries are keys of the tree, one in four absent
    (its answer stays -1).  Scale 16 reaches the papers' tree height (2)."""
    words, keys, values, height, n_nodes = _bt_tree(_bt_records(scale), 62)
    nq = min(size(64, scale), 10000)
    rng = np.random.default_rng(63)
    query = rng.choice(keys, nq).astype(np.int64)
    absent = rng.random(nq) < 0.25
    query[absent] = np.setdiff1d(np.arange(2 * keys.size), keys)[: absent.sum()] if absent.any() else []
    query = query.astype(np.int32)

    def ref(ins, sc):
        rank, hit = _bt_rank_hit(keys, query)
        found = ins["found"].copy()
        found[hit] = values[rank[hit]]
        leaf = _bt_leaves(words, n_nodes, height, query)
        return {"found": found, "cursor": leaf, "next": leaf}

    queried = {
        "records": ArraySpec("int32", (keys.size,)),
        **same_arrays(("cursor", "next"), ArraySpec("int64", (nq,))),
        "query": ArraySpec("int32", (nq,)),
        "found": ArraySpec("int32", (nq,), "full", value=-1),
    }
    fixed = {"records": values, "query": query}
    return _bt_recipe(
        "rd_btree_findk", nq, words, height, n_nodes, queried, ["found", "cursor", "next"], 64, ref, fixed
    )


@FAMILY.recipe(166.6667, "mil.txt: 1M keys, order 256, height 2; j 6000 3000")
def _rd_btree_findrangek(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """findRangeK's launch: one CTA of 256 threads per range query; 48 queries by default, 48 * scale (at
    most the original's 6000); ``ctas`` is not used.  A range is [lo, lo + 3000 * records / 1M] over key
    values (the original's 3000 of 1M records, at least 10); its ends hit a key about half the time (a
    missed end leaves its output at 0, as the original's host zeroes them).  Scale 16 reaches the papers'
    tree height (2)."""
    n = _bt_records(scale)
    words, keys, values, height, n_nodes = _bt_tree(n, 65)
    nq = min(size(48, scale), 6000)
    width = max(10, 3000 * n // 1_000_000)
    rng = np.random.default_rng(66)
    lo = rng.integers(0, 2 * n - width, nq).astype(np.int32)
    hi = (lo + width).astype(np.int32)

    def ref(ins, sc):
        rl, hl = _bt_rank_hit(keys, lo)
        rh, hh = _bt_rank_hit(keys, hi)
        first = ins["first"].astype(np.int64).copy()
        first[hl] = rl[hl]
        count = ins["count"].astype(np.int64).copy()
        count[hh] = rh[hh] - first[hh] + 1
        return {
            "first": first.astype(np.int32),
            "count": count.astype(np.int32),
            "lo_at": _bt_leaves(words, n_nodes, height, lo),
            "hi_at": _bt_leaves(words, n_nodes, height, hi),
        }

    queried = {f: ArraySpec("int64", (nq,)) for f in ("lo_at", "lo_next", "hi_at", "hi_next")}
    queried.update({f: ArraySpec("int32", (nq,)) for f in ("lo", "hi", "first", "count")})
    outputs = ["first", "count", "lo_at", "hi_at"]
    return _bt_recipe(
        "rd_btree_findrangek", nq, words, height, n_nodes, queried, outputs, 67, ref, {"lo": lo, "hi": hi}
    )


# ---- kmeans ----------------------------------------------------------------------------------------

#: the constant center table's capacity (clusters x features), as the original's
KM_MAX_CLUSTERS, KM_MAX_FEATURES = 32, 34


@FAMILY.recipe(241.220703125, "kdd_cup: 494020 points, 34 features, 5 clusters")
def _rd_kmeans_point(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """kmeansPoint's launch: 256 threads, one per point, on a square 2-D grid of ceil(sqrt(ceil(n/256)))
    CTAs a side (the original's); ``ctas`` is not used.  34 features and 5 clusters (kdd_cup's, the
    benchmark's default), 2048 points by default, 2048 * scale; scale 241.22 is kdd_cup's 494020 points.

    Points are drawn around 5 random centers; a point whose nearest and second-nearest centers are closer
    in distance than the float32 error of the two distances is moved onto its nearest center, so the
    membership (compared exactly) is the float64 argmin."""
    block = manifest_entry("rd_kmeans_point")["threads_per_cta"]
    nf, nc = 34, 5
    n = size(2048, scale, 1)
    per = -(-n // block)
    side = int(np.ceil(np.sqrt(per)))
    while side * side < per:
        side += 1
    rng = np.random.default_rng(68)
    centers = rng.uniform(0.0, 1.0, (nc, nf))
    pts = centers[rng.integers(0, nc, n)] + rng.normal(0.0, 0.25, (n, nf))
    pts = pts.astype(np.float32)
    cen32 = centers.astype(np.float32)

    def dists(p):
        t = p.astype(np.float64)[:, None, :] - cen32.astype(np.float64)[None, :, :]
        return (t * t).sum(axis=2)

    # each distance: nf squares of a rounded difference (relative error 2 * 2**-24 each) summed in nf
    # rounded steps, so within (nf + 3) * 2**-24 of its value; an argmin is safe when the two smallest
    # distances are further apart than both bounds together
    d = dists(pts)
    two = np.sort(d, axis=1)[:, :2]
    unsafe = two[:, 1] - two[:, 0] <= (nf + 3) * EPS32 * (two[:, 0] + two[:, 1]) * 2
    pts[unsafe] = cen32[np.argmin(d[unsafe], axis=1)]
    feat = np.ascontiguousarray(pts.T).reshape(-1)  # feature-major, as the original's inverted layout
    table = np.zeros(KM_MAX_CLUSTERS * KM_MAX_FEATURES, np.float32)
    table[: nc * nf] = cen32.reshape(-1)

    def ref(ins, sc):
        p = ins["feat"].reshape(nf, n).T
        return {"member": np.argmin(dists(p), axis=1).astype(np.int32)}

    return Recipe(
        kernel="rd_kmeans_point",
        grid=(side, side),
        block=(block,),
        params=[
            *pointers("feat"),
            *scalars("i32", nfeat=nf, npts=n, nclust=nc),
            *pointers("member", "centers_g", "partial_centers", "changed"),
        ],
        arrays={
            "feat": ArraySpec("float32", (n * nf,)),
            "member": ArraySpec("int32", (n,), "full", value=-7),
            "centers_g": ArraySpec("float32", (nc * nf,)),
            "partial_centers": ArraySpec("float32", (1,)),
            "changed": ArraySpec("int32", (1,)),
            "centers": ArraySpec("float32", (KM_MAX_CLUSTERS * KM_MAX_FEATURES,)),
        },
        seed=69,
        **check("member", ref),
        fixed={"feat": feat, "centers_g": cen32.reshape(-1), "centers": table},
        constants={3: "centers"},
    )


# ---- gaussian --------------------------------------------------------------------------------------


def _ga_matrix(n: int) -> np.ndarray:
    """The original's generated system (``-s n``): a[i][j] = 10 * exp(-0.01 * |i - j|)."""
    i = np.arange(n)
    return (10.0 * np.exp(-0.01 * np.abs(i[:, None] - i[None, :]))).astype(np.float32)


def _ga_size(scale: float) -> tuple[int, int]:
    """Matrix order (128 by default; scale 8 is the papers' 1024) and the elimination step t (n / 4)."""
    n = size(128, scale, 8)
    return n, n // 4


@FAMILY.recipe(8, "matrix 1024 x 1024 (-s 1024)")
def _rd_gaussian_fan1(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """Fan1's launch for one step t: 512 threads, ceil(n / 512) CTAs (the original's); ``ctas`` is not
    used.  The matrix is the original's generated one, perturbed by +-1 % so that no two rows are alike."""
    block = manifest_entry("rd_gaussian_fan1")["threads_per_cta"]
    n, t = _ga_size(scale)
    rng = np.random.default_rng(70)
    a = (_ga_matrix(n) * rng.uniform(0.99, 1.01, (n, n))).astype(np.float32)

    def ref(ins, sc):
        A = ins["a"].astype(np.float64).reshape(n, n)
        m = ins["mult"].astype(np.float64).reshape(n, n).copy()
        m[t + 1 :, t] = A[t + 1 :, t] / A[t, t]
        return {"mult": m.reshape(-1)}

    def tol(ins):  # one correctly rounded division: half an ulp, within 2**-24 of the quotient
        A = ins["a"].astype(np.float64).reshape(n, n)
        b = np.zeros((n, n))
        b[t + 1 :, t] = EPS32 * np.abs(A[t + 1 :, t] / A[t, t])
        return 0.0, b.reshape(-1)

    return Recipe(
        kernel="rd_gaussian_fan1",
        grid=(-(-n // block),),
        block=(block,),
        params=[*pointers("mult", "a"), *scalars("i32", n=n, t=t)],
        arrays=same_arrays(("mult", "a"), ArraySpec("float32", (n * n,))),
        seed=71,
        **check("mult", ref, tol),
        fixed={"a": a.reshape(-1)},
    )


@FAMILY.recipe(8, "matrix 1024 x 1024 (-s 1024)")
def _rd_gaussian_fan2(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """Fan2's launch for one step t: 4 x 4 threads, a square grid of ceil(n / 4) CTAs a side (the
    original's); ``ctas`` is not used.  The multipliers are Fan1's of the same matrix."""
    block = manifest_entry("rd_gaussian_fan2")["threads_per_cta"]
    assert block == 16
    n, t = _ga_size(scale)
    rng = np.random.default_rng(72)
    a = (_ga_matrix(n) * rng.uniform(0.99, 1.01, (n, n))).astype(np.float32)
    mult = np.zeros((n, n), np.float32)
    mult[t + 1 :, t] = a[t + 1 :, t] / a[t, t]
    g = -(-n // 4)

    def parts(ins):
        A = ins["a"].astype(np.float64).reshape(n, n)
        M = ins["mult"].astype(np.float64).reshape(n, n)
        r = ins["rhs"].astype(np.float64)
        return A, M, r

    def ref(ins, sc):
        A, M, r = parts(ins)
        A = A.copy()
        r = r.copy()
        A[t + 1 :, t:] -= M[t + 1 :, t : t + 1] * A[t, t:][None, :]
        r[t + 1 :] -= M[t + 1 :, t] * r[t]
        return {"a": A.reshape(-1), "rhs": r}

    # each updated element is one fused multiply-add (a - m * p rounded once): within 2**-24 of the
    # magnitudes |a| + |m * p|
    def tol_a(ins):
        A, M, _ = parts(ins)
        b = np.zeros((n, n))
        b[t + 1 :, t:] = EPS32 * (np.abs(A[t + 1 :, t:]) + np.abs(M[t + 1 :, t : t + 1] * A[t, t:][None, :]))
        return 0.0, b.reshape(-1)

    def tol_r(ins):
        _, M, r = parts(ins)
        b = np.zeros(n)
        b[t + 1 :] = EPS32 * (np.abs(r[t + 1 :]) + np.abs(M[t + 1 :, t] * r[t]))
        return 0.0, b

    return Recipe(
        kernel="rd_gaussian_fan2",
        grid=(g, g),
        block=(4, 4),
        params=[*pointers("mult", "a", "rhs"), *scalars("i32", n=n, skip=n - t, t=t)],
        arrays={
            **same_arrays(("mult", "a"), ArraySpec("float32", (n * n,))),
            "rhs": ArraySpec("float32", (n,), "uniform", -1.0, 1.0),
        },
        outputs=["a", "rhs"],
        seed=73,
        reference=ref,
        tolerance={"a": tol_a, "rhs": tol_r},
        fixed={"a": a.reshape(-1), "mult": mult.reshape(-1)},
    )


# ---- backprop --------------------------------------------------------------------------------------

#: hidden units (the original's fixed layer size) and the CTA's rows of input units
BP_HID, BP_ROWS = 16, 16


def _bp_units(scale: float) -> int:
    """Input units: 16 per CTA, 64 CTAs by default; scale 64 is the original's 65536 units."""
    return BP_ROWS * size(64, scale)


@FAMILY.recipe(64, "65536 input units, 16 hidden (1 x 4096 grid)")
def _rd_backprop_forward(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """bpnn_layerforward_CUDA's launch: 16 x 16 threads, a 1 x (n_in / 16) grid (the original's); ``ctas``
    is not used."""
    assert manifest_entry("rd_backprop_forward")["threads_per_cta"] == BP_ROWS * BP_HID
    n_in = _bp_units(scale)
    nb = n_in // BP_ROWS
    h1 = BP_HID + 1
    # the rows k .. k + span(k) - 1 of its CTA that row k holds after the tree (span: the largest power of
    # two dividing k, 16 for k = 0)
    k = np.arange(BP_ROWS)
    span = np.where(k == 0, BP_ROWS, k & -k)

    def products(ins):
        w = ins["w"].astype(np.float64).reshape(n_in + 1, h1)
        x = ins["x"].astype(np.float64)
        return w[1:, 1:].reshape(nb, BP_ROWS, BP_HID) * x[1:].reshape(nb, BP_ROWS, 1)

    def sums(p):
        c = np.concatenate([np.zeros((nb, 1, BP_HID)), np.cumsum(p, axis=1)], axis=1)
        return c[:, k + span, :] - c[:, k, :]  # row k: its span of rows

    def ref(ins, sc):
        p = products(ins)
        w = ins["w"].astype(np.float64).reshape(n_in + 1, h1).copy()
        s = sums(p)
        w[1:, 1:] = s.reshape(n_in, BP_HID)
        part = s[:, 0, :]  # the CTA's full sum per hidden unit
        return {"w": w.reshape(-1), "partial": part.reshape(-1)}

    # one rounded product and up to 4 rounded tree additions: within 5 * 2**-24 of the sum of the
    # magnitudes of the products summed
    def tol_w(ins):
        b = np.zeros((n_in + 1, h1))
        b[1:, 1:] = (5 * EPS32 * sums(np.abs(products(ins)))).reshape(n_in, BP_HID)
        return 0.0, b.reshape(-1)

    def tol_p(ins):
        return 0.0, (5 * EPS32 * sums(np.abs(products(ins)))[:, 0, :]).reshape(-1)

    return Recipe(
        kernel="rd_backprop_forward",
        shared_bytes=shared_bytes("rd_backprop_forward"),
        grid=(1, nb),
        block=(BP_HID, BP_ROWS),
        params=[*pointers("x", "hidden", "w", "partial"), *scalars("i32", n_in=n_in, n_hid=BP_HID)],
        arrays={
            "x": ArraySpec("float32", (n_in + 1,), "uniform", 0.0, 1.0),
            "hidden": ArraySpec("float32", (h1,)),
            "w": ArraySpec("float32", ((n_in + 1) * h1,), "uniform", -1.0, 1.0),
            "partial": ArraySpec("float32", (nb * BP_HID,)),
        },
        outputs=["w", "partial"],
        seed=74,
        reference=ref,
        tolerance={"w": tol_w, "partial": tol_p},
    )


@FAMILY.recipe(64, "65536 input units, 16 hidden (1 x 4096 grid)")
def _rd_backprop_adjust(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """bpnn_adjust_weights_cuda's launch: 16 x 16 threads, a 1 x (n_in / 16) grid (the original's);
    ``ctas`` is not used."""
    assert manifest_entry("rd_backprop_adjust")["threads_per_cta"] == BP_ROWS * BP_HID
    n_in = _bp_units(scale)
    nb = n_in // BP_ROWS
    h1 = BP_HID + 1

    def parts(ins):
        w = ins["w"].astype(np.float64).reshape(n_in + 1, h1)
        old = ins["prev"].astype(np.float64).reshape(n_in + 1, h1)
        d = ins["delta"].astype(np.float64)
        y = ins["y"].astype(np.float64)
        grad = np.zeros((n_in + 1, h1))
        grad[1:, 1:] = 0.3 * d[None, 1:] * y[1:, None]
        grad[0, 1:] = 0.3 * d[1:]
        return w, old, grad

    def ref(ins, sc):
        w, old, grad = parts(ins)
        step = grad + 0.3 * old
        keep = np.zeros((n_in + 1, h1), bool)
        keep[:, 0] = True
        return {"w": np.where(keep, w, w + step).reshape(-1), "prev": np.where(keep, old, step).reshape(-1)}

    # a few double operations (relative error 2**-53 each), then one rounding to float32 (2**-24)
    def tol(which):
        def f(ins):
            w, old, grad = parts(ins)
            mag = np.abs(grad) + 0.3 * np.abs(old) + (np.abs(w) if which == "w" else 0.0)
            mag[:, 0] = 0.0
            return 0.0, ((EPS32 + 6 * 2.0**-53) * mag).reshape(-1)

        return f

    return Recipe(
        kernel="rd_backprop_adjust",
        grid=(1, nb),
        block=(BP_HID, BP_ROWS),
        params=[
            *pointers("delta"),
            *scalars("i32", n_hid=BP_HID),
            *pointers("y"),
            *scalars("i32", n_in=n_in),
            *pointers("w", "prev"),
        ],
        arrays={
            "delta": ArraySpec("float32", (h1,), "uniform", -0.5, 0.5),
            "y": ArraySpec("float32", (n_in + 1,), "uniform", 0.0, 1.0),
            "w": ArraySpec("float32", ((n_in + 1) * h1,), "uniform", -1.0, 1.0),
            "prev": ArraySpec("float32", ((n_in + 1) * h1,), "uniform", -0.1, 0.1),
        },
        outputs=["w", "prev"],
        seed=75,
        reference=ref,
        tolerance={"w": tol("w"), "prev": tol("prev")},
    )


# ---- pathfinder ------------------------------------------------------------------------------------

#: the original's pyramid height (rows advanced per launch) and its number of rows
PF_STEPS, PF_ROWS = 20, 100


@FAMILY.recipe(50, "100000 columns, 100 rows, pyramid height 20")
def _rd_pathfinder(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """dynproc_kernel's second launch (rows 20 to 40, a full pyramid of 20 rows): 256 threads, one CTA per
    216 inner columns (the original's grid); ``ctas`` is not used.  2000 columns by default, 2000 * scale;
    scale 50 is the original's 100000.  Wall costs are 0..9 as the original draws them; the row the launch
    starts from holds costs of 20 rows (0..199)."""
    block = manifest_entry("rd_pathfinder")["threads_per_cta"]
    cols = size(2000, scale, 8)
    inner = block - 2 * PF_STEPS
    grid = -(-cols // inner)
    t = PF_STEPS

    def ref(ins, sc):
        wall = ins["wall"].astype(np.int64).reshape(PF_ROWS - 1, cols)
        cur = ins["src"].astype(np.int64)
        for s in range(PF_STEPS):
            left = np.concatenate([cur[:1], cur[:-1]])
            right = np.concatenate([cur[1:], cur[-1:]])
            cur = np.minimum(np.minimum(left, cur), right) + wall[t + s]
        return {"dst": cur.astype(np.int32)}

    return Recipe(
        kernel="rd_pathfinder",
        shared_bytes=shared_bytes("rd_pathfinder"),
        grid=(grid,),
        block=(block,),
        params=[
            *scalars("i32", steps=PF_STEPS),
            *pointers("wall", "src", "dst"),
            *scalars("i32", cols=cols, rows=PF_ROWS, first_row=t, halo=PF_STEPS),
        ],
        arrays={
            "wall": ArraySpec("int32", ((PF_ROWS - 1) * cols,), "randint", 0, 10),
            "src": ArraySpec("int32", (cols,), "randint", 0, 200),
            "dst": ArraySpec("int32", (cols,), "full", value=-1),
        },
        seed=76,
        **check("dst", ref),
    )


# ---- nw --------------------------------------------------------------------------------------------

#: the tile edge (threads per CTA) and the gap penalty of the original's run
NW_TILE, NW_GAP = 16, 10


def _nw_problem(scale: float, seed: int):
    """Two random sequences over 10 letters (the original draws 1..10), a random symmetric substitution
    table with entries -4..11 (the range of BLOSUM62, which the original uses), the substitution score of
    every cell and the full score matrix ((n + 1) x (n + 1), borders -j * gap).  n = 16 * tiles: 32 tiles
    by default, scale 4 is the original's 2048."""
    tiles = size(32, scale, 2)
    n = NW_TILE * tiles
    cols = n + 1
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 10, n)
    b = rng.integers(0, 10, n)
    t = rng.integers(-4, 12, (10, 10))
    t = np.triu(t) + np.triu(t, 1).T
    ref = np.zeros((cols, cols), np.int64)
    ref[1:, 1:] = t[a[:, None], b[None, :]]
    full = np.zeros((cols, cols), np.int64)
    full[0, :] = -np.arange(cols) * NW_GAP
    full[:, 0] = -np.arange(cols) * NW_GAP
    for d in range(2, 2 * cols - 1):  # anti-diagonal i + j = d, inner cells
        i = np.arange(max(1, d - cols + 1), min(cols - 1, d - 1) + 1)
        j = d - i
        full[i, j] = np.maximum(
            np.maximum(full[i - 1, j - 1] + ref[i, j], full[i, j - 1] - NW_GAP), full[i - 1, j] - NW_GAP
        )
    return tiles, cols, ref, full


def _nw_recipe(kernel: str, scale: float, seed: int) -> Recipe:
    """One launch of the sweep, the widest of its half: needle_cuda_shared_1 at diag = tiles (tiles
    CTAs on the main anti-diagonal of tiles), needle_cuda_shared_2 at diag = tiles - 1 (the next one);
    16 threads a CTA; ``ctas`` is not used.  The matrix holds the final scores of every tile before
    that anti-diagonal and zeros (the original's initial value) from it on."""
    assert manifest_entry(kernel)["threads_per_cta"] == NW_TILE
    tiles, cols, ref, full = _nw_problem(scale, seed)
    first = kernel == "rd_nw_1"
    diag = tiles if first else tiles - 1
    tsum = diag - 1 if first else 2 * tiles - diag - 1  # tile_x + tile_y of the launch's tiles
    ty = np.arange(cols - 1) // NW_TILE
    tsum_of = ty[:, None] + ty[None, :]
    start = full.copy()
    start[1:, 1:][tsum_of >= tsum] = 0
    after = full.copy()
    after[1:, 1:][tsum_of > tsum] = 0

    def ref_fn(ins, sc):
        return {"m": after.astype(np.int32).reshape(-1)}

    return Recipe(
        kernel=kernel,
        shared_bytes=shared_bytes(kernel),
        grid=(diag,),
        block=(NW_TILE,),
        params=[*pointers("ref", "m"), *scalars("i32", cols=cols, gap=NW_GAP, diag=diag, tiles=tiles)],
        arrays=same_arrays(("ref", "m"), ArraySpec("int32", (cols * cols,))),
        seed=seed,
        **check("m", ref_fn),
        fixed={"ref": ref.astype(np.int32).reshape(-1), "m": start.astype(np.int32).reshape(-1)},
    )


@FAMILY.recipe(4, "2048 x 2048 sequences, penalty 10")
def _rd_nw_1(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """needle_cuda_shared_1's widest launch (see :func:`_nw_recipe`)."""
    return _nw_recipe("rd_nw_1", scale, 77)


@FAMILY.recipe(4, "2048 x 2048 sequences, penalty 10")
def _rd_nw_2(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """needle_cuda_shared_2's widest launch (see :func:`_nw_recipe`)."""
    return _nw_recipe("rd_nw_2", scale, 78)


# ---- particlefilter (naive) ------------------------------------------------------------------------


def resampling_inputs(n: int, seed: int):
    """A particle filter's resampling step: ``(cdf, draw, reference)``: the cumulative table of ``n`` random
    (positive) weights, its last entry just below 1 (a draw near 1 finds no entry, as rounding can make
    happen), ``n`` systematic draws (u1 + p / n with u1 in [0, 1/n)), and the numpy reference: each draw's
    particle, the first whose cumulative weight reaches it, the last where none does (the kernels' copies of
    its ``px``/``py`` into ``nx``/``ny``)."""
    rng = np.random.default_rng(seed)
    w = rng.exponential(1.0, n)
    cdf = np.cumsum(w) / w.sum()
    cdf[-1] = 1.0 - 2.0**-40
    draw = rng.uniform(0.0, 1.0 / n) + np.arange(n) / n

    def ref(ins, sc):
        k = np.searchsorted(ins["cdf"], ins["draw"], side="left")
        k = np.where(k >= n, n - 1, k)
        return {"nx": ins["px"][k], "ny": ins["py"][k]}

    return cdf, draw, ref


def resampling_arrays(n: int) -> tuple[list[Param], dict[str, ArraySpec]]:
    """The resampling kernels' first parameters and their arrays of ``n`` particles: the positions ``px``,
    ``py`` (uniform in [0, 128)), the table ``cdf``, the draws ``draw`` and the copies ``nx``, ``ny``."""
    names = ("px", "py", "cdf", "draw", "nx", "ny")
    arrays = {
        **uniform_arrays(names[:2], (n,), 0.0, 128.0, "float64"),
        **same_arrays(names[2:], ArraySpec("float64", (n,))),
    }
    return pointers(*names), arrays


def resampling_recipe(
    kernel: str, n: int, block: int, seeds: tuple[int, int], params: list[Param], arrays: dict[str, ArraySpec]
) -> Recipe:
    """A resampling kernel's recipe over ``n`` particles, one per thread in CTAs of ``block``: the shared
    parameters and arrays (:func:`resampling_arrays`), then ``params`` and ``arrays``; the table and the draws
    from the first of ``seeds`` (:func:`resampling_inputs`), the recipe's seed the second; the copies ``nx``
    and ``ny`` compared exactly."""
    cdf, draw, ref = resampling_inputs(n, seeds[0])
    pf_params, pf_arrays = resampling_arrays(n)
    return Recipe(
        kernel=kernel,
        grid=(-(-n // block),),
        block=(block,),
        params=[*pf_params, *params],
        arrays={**pf_arrays, **arrays},
        fixed={"cdf": cdf, "draw": draw},
        seed=seeds[1],
        **check(("nx", "ny"), ref, (0.0, 0.0)),
    )


@FAMILY.recipe(4, "-x 128 -y 128 -z 10 -np 1000: 1000 particles")
def _rd_particlefilter(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """kernel's launch: 128 threads, one per particle, ceil(n / 128) CTAs (the original's); ``ctas`` is
    not used.  250 particles by default, 250 * scale; scale 4 is the original's 1000.  Weights are random
    (positive), the draws systematic as the original's (u1 + p / n with u1 in [0, 1/n)), so a thread's
    search runs about n / 2 steps on average; the last draw may lie above the table (no entry found:
    the last particle)."""
    block = manifest_entry("rd_particlefilter")["threads_per_cta"]
    n = size(250, scale, 2)
    return resampling_recipe("rd_particlefilter", n, block, (79, 80), [Param("n", "i32", n)], {})
