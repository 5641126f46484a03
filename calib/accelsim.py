"""Compare the cycle simulator with Accel-Sim on the built-in workloads (resumable).

    . <accel-sim build>/env.sh                 # sets ACCELSIM (accel-sim.out) and LD_LIBRARY_PATH
    python calib/accelsim.py                   # every workload on SM7_QV100_1SM and SM2_GTX480_1SM
    python calib/accelsim.py --config SM7_QV100_1SM --workload saxpy --workload reduce_sum

For each configuration (a one-SM GPGPU-Sim config) and workload: ``rfmodel workload export-accelsim
--num-sms N`` writes one SM's share of the full GPU (``N`` = the full config's ``-gpgpu_n_clusters`` x
``-gpgpu_n_cores_per_cluster``), Accel-Sim runs that trace directory on the one-SM config, and ``rfmodel
simulate --compat gpgpusim --gpu <config>/gpgpusim.config`` runs the same directory.  Cycles, IPC (warp
instructions per cycle), the L1D hit rate and the shares of the schedulers' no-issue cycles go one row per
workload to ``<out>/<config>.csv`` (rewritten after every workload; a workload already there for the same
rfmodel commit is skipped unless ``--force``; failed ones are retried with ``--retry-failed``), the run's
provenance to ``<out>/<config>.json``, and the section "Simulator against Accel-Sim on the built-in
workloads" of ``docs/validation.md`` is regenerated from every configuration's CSV in ``<out>``.  Each row
keeps the digest of the trace folder both simulators ran (``trace_digest``); after a change of rfmodel's
simulator alone, ``--reuse-accelsim`` reruns rfmodel's side and takes Accel-Sim's from the row that ran the
same trace on the same Accel-Sim (a row without a digest, or with another, runs Accel-Sim again).

Accel-Sim is found from ``ACCELSIM`` (the path of ``accel-sim.out``); the ``env.sh`` of its build (looked up
in the ancestors of that path, or ``--env``) is sourced before each run.  Without ``ACCELSIM`` the script
exits with status 2.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: the reference GPGPU-Sim configurations: ../shared/reference beside the project, or the folder
#: RFMODEL_REFERENCE names (as the tests read it: tests/helpers_reference.py)
REFERENCE = Path(os.environ.get("RFMODEL_REFERENCE") or ROOT.parent / "shared/reference") / "gpgpusim-configs"
LOCAL_CONFIGS = ROOT / "calib" / "accelsim" / "configs"

#: name -> (the one-SM config folder, the full GPU's config folder the SM count is read from)
CONFIGS: dict[str, tuple[Path, Path]] = {
    "SM7_QV100_1SM": (REFERENCE / "SM7_QV100_1SM", REFERENCE / "SM7_QV100"),
    "SM2_GTX480_1SM": (LOCAL_CONFIGS / "SM2_GTX480_1SM", REFERENCE / "SM2_GTX480"),
}
DEFAULT_CONFIGS = ("SM7_QV100_1SM", "SM2_GTX480_1SM")

SECTION = "## Simulator against Accel-Sim on the built-in workloads"
#: the hand-written section the generated one follows when it is first added
ANCHOR = "## Simulator against Accel-Sim\n"

FIELDS = (
    "config",
    "workload",
    "status",
    "accelsim_cycles",
    "rfmodel_cycles",
    "error_pct",
    "accelsim_ipc",
    "rfmodel_ipc",
    "accelsim_l1d_hit_rate",
    "rfmodel_l1d_hit_rate",
    "accelsim_l1d_accesses",
    "accelsim_structural_share",
    "rfmodel_structural_share",
    "accelsim_dependency_share",
    "rfmodel_dependency_share",
    "accelsim_idle_share",
    "rfmodel_idle_share",
    "accelsim_warp_instructions",
    "rfmodel_warp_instructions",
    "accelsim_seconds",
    "rfmodel_seconds",
    "accelsim_l1d_kb",
    "rfmodel_not_modelled",
    "num_sms",
    "binary_version",
    "rfmodel_commit",
    "accelsim_commit",
    "trace_digest",
    "note",
)
#: the columns of Accel-Sim's side of a row (what ``--reuse-accelsim`` takes from an earlier row)
ACCELSIM_FIELDS = tuple(f for f in FIELDS if f.startswith("accelsim_") and f != "accelsim_commit")

# rfmodel's stall reasons grouped as Accel-Sim's issue-stage counters group them (per scheduler and cycle
# without an issue: no valid instruction / waiting on the scoreboard / ready but the pipeline was full)
RF_IDLE = ("no_ready_warp",)
RF_DEPENDENCY = ("raw_dependency", "memory")
RF_STRUCTURAL = ("no_free_collector", "bank_conflict", "exec_unit_busy")


class UsageError(Exception):
    """A problem with the command line or the environment: one line, exit status 2."""


# ------------------------------------------------------------------ configurations
@dataclass(frozen=True)
class Config:
    name: str
    folder: Path
    num_sms: int
    binary_version: int

    @property
    def gpgpusim_config(self) -> Path:
        return self.folder / "gpgpusim.config"

    @property
    def trace_config(self) -> Path:
        return self.folder / "trace.config"


def _options(path: Path) -> dict[str, str]:
    from rfmodel.spec.gpgpusim import parse_option_file

    return {k: o.value for k, o in parse_option_file(path).items()}


def sm_count(config: str | os.PathLike) -> int:
    """SMs of a GPGPU-Sim config: ``-gpgpu_n_clusters`` x ``-gpgpu_n_cores_per_cluster`` (built-in defaults
    where the file does not set them).  ``config`` is the ``gpgpusim.config`` or its folder."""
    from rfmodel.spec.gpgpusim import GPGPUSIM_DEFAULTS

    p = Path(config)
    if p.is_dir():
        p = p / "gpgpusim.config"
    opts = _options(p)
    n = 1
    for key in ("-gpgpu_n_clusters", "-gpgpu_n_cores_per_cluster"):
        value = opts.get(key, GPGPUSIM_DEFAULTS[key]).strip()
        if not value.isdigit() or int(value) < 1:
            raise UsageError(f"{p}: {key} {value!r} is not a positive integer")
        n *= int(value)
    return n


def trace_binary_version(folder: Path) -> int:
    """The ``-binary version`` the exported traces get for this config.

    Accel-Sim picks its opcode map from the trace's binary version.  Volta's (70, what rfmodel writes)
    sends BRA and the other control-flow opcodes to specialized unit 1; a config that does not enable that
    unit (GPGPU-Sim asserts, or with only typed operand collectors the instruction waits forever) gets 61,
    Pascal's map, which classes every opcode rfmodel writes as Volta's does except BRA, an ordinary branch
    issued to the SP/INT pipelines with the int timing.
    """
    opts: dict[str, str] = {}
    for name in ("gpgpusim.config", "trace.config"):
        if (folder / name).is_file():
            opts.update(_options(folder / name))
    unit = opts.get("-specialized_unit_1", "").split(",")
    return 70 if unit and unit[0].strip() == "1" else 61


def resolve_config(arg: str, num_sms: int | None = None) -> Config:
    """A config name from :data:`CONFIGS` or the path of a one-SM config folder (or its gpgpusim.config)."""
    if arg in CONFIGS:
        folder, full = CONFIGS[arg]
        name = arg
    else:
        folder = Path(arg)
        if folder.name == "gpgpusim.config":
            folder = folder.parent
        name = folder.resolve().name
        full = None
        if name.endswith("_1SM"):
            for parent in (folder.resolve().parent, REFERENCE):
                if (parent / name[: -len("_1SM")] / "gpgpusim.config").is_file():
                    full = parent / name[: -len("_1SM")]
                    break
    if not (folder / "gpgpusim.config").is_file():
        raise UsageError(f"no gpgpusim.config in {folder} (configs: {', '.join(CONFIGS)} or a folder)")
    if num_sms is None:
        if full is None or not (full / "gpgpusim.config").is_file():
            raise UsageError(f"{name}: the full GPU's config is not there to count its SMs; give --num-sms")
        num_sms = sm_count(full)
    return Config(name, folder, num_sms, trace_binary_version(folder))


def set_binary_version(traceg: Path, version: int) -> None:
    """Rewrite the ``-binary version`` header line of a ``.traceg`` in place (both values two digits)."""
    with open(traceg, "r+b") as f:
        head = f.read(4096)
        m = re.search(rb"^-binary version = (\d+)$", head, re.M)
        if m is None:
            raise RuntimeError(f"{traceg}: no '-binary version' header")
        if len(m.group(1)) != len(str(version)):
            raise RuntimeError(f"{traceg}: cannot rewrite binary version {m.group(1).decode()} in place")
        f.seek(m.start(1))
        f.write(str(version).encode())


# ------------------------------------------------------------------ Accel-Sim
@dataclass(frozen=True)
class AccelSim:
    exe: Path
    env_sh: Path | None

    @property
    def build_root(self) -> Path | None:
        return self.env_sh.parent if self.env_sh else None

    def commits(self) -> dict[str, str]:
        out = {}
        root = self.build_root
        for repo in ("accel-sim-framework", "gpgpu-sim_distribution"):
            f = root / repo / "COMMIT" if root else None
            out[repo] = f.read_text().strip() if f and f.is_file() else "unknown"
        return out


def find_accelsim(env_option: str | None = None) -> AccelSim:
    exe = os.environ.get("ACCELSIM", "")
    if not exe:
        raise UsageError(
            "ACCELSIM is not set: source the Accel-Sim build's env.sh or export "
            "ACCELSIM=/path/to/accel-sim.out"
        )
    p = Path(exe)
    if not (p.is_file() and os.access(p, os.X_OK)):
        raise UsageError(f"ACCELSIM={exe} is not an executable file")
    if env_option:
        env_sh = Path(env_option)
        if not env_sh.is_file():
            raise UsageError(f"--env {env_option}: no such file")
    else:
        env_sh = next((d / "env.sh" for d in p.resolve().parents if (d / "env.sh").is_file()), None)
    return AccelSim(p.resolve(), env_sh)


def parse_accelsim(text: str) -> dict:
    """The counters this comparison reads from Accel-Sim's stdout (the last value printed of each).

    ``done`` is whether the simulator reached its normal exit; ``error`` the first line that says why
    not (deadlock, unsupported binary version, a GPGPU-Sim error), else None.
    """

    def last(pattern: str, cast=int):
        found = re.findall(pattern, text, re.M)
        return cast(found[-1]) if found else None

    r: dict = {
        "cycles": last(r"^gpu_tot_sim_cycle\s*=\s*(\d+)"),
        "thread_instructions": last(r"^gpu_tot_sim_insn\s*=\s*(\d+)"),
        "warp_instructions": last(r"^gpgpu_n_tot_w_icount\s*=\s*(\d+)"),
        "l1d_accesses": last(r"^\s*L1D_total_cache_accesses\s*=\s*(\d+)"),
        "l1d_misses": last(r"^\s*L1D_total_cache_misses\s*=\s*(\d+)"),
        "l1d_miss_rate": last(r"^\s*L1D_total_cache_miss_rate\s*=\s*([0-9.eE+-]+|nan|-nan)", float),
        # the adaptive carve-out: the L1D capacity left beside the CTAs' shared memory
        "l1d_kb": last(r"^GPGPU-Sim: Reconfigure L1 cache to (\d+)KB"),
        "done": "*** exit detected ***" in text,
        "error": None,
    }
    acc, miss = r["l1d_accesses"], r["l1d_misses"]
    r["l1d_hit_rate"] = 1.0 - miss / acc if acc and miss is not None else None
    m = re.findall(r"^Stall:(\d+)\s+W0_Idle:(\d+)\s+W0_Scoreboard:(\d+)", text, re.M)
    if m:
        stall, idle, board = (int(x) for x in m[-1])
        total = stall + idle + board
        r["structural_share"] = stall / total if total else None
        r["idle_share"] = idle / total if total else None
        r["dependency_share"] = board / total if total else None
    for pattern in (
        r"^.*deadlock detected.*$",
        r"^unsupported binary version.*$",
        r"^.*(\*\* ERROR|ERROR \*\*).*$",
        r"^.*Assertion .* failed.*$",
    ):
        m2 = re.search(pattern, text, re.M)
        if m2:
            r["error"] = m2.group(0).strip()
            break
    if r["error"] is None and not r["done"]:
        r["error"] = "no normal exit"
    return r


def parse_rfmodel(text: str) -> dict:
    """Cycles, IPC, warp instructions, L1D hit rate and stall shares from ``rfmodel simulate --json``."""
    d = json.loads(text)
    (row,) = d["rows"]
    shares = {s["stall_reason"]: float(s["fraction"]) for s in d.get("stalls", [])}

    def share(reasons):
        return sum(shares.get(k, 0.0) for k in reasons) if shares else None

    hit = row.get("l1d_hit_rate")
    return {
        "cycles": float(row["cycles"]),
        "ipc": float(row["ipc"]),
        "warp_instructions": int(row["warp_instructions"]),
        "l1d_hit_rate": None if hit is None or not math.isfinite(float(hit)) else float(hit),
        "structural_share": share(RF_STRUCTURAL),
        "dependency_share": share(RF_DEPENDENCY),
        "idle_share": share(RF_IDLE),
        "not_modelled": d.get("attrs", {}).get("not_modelled", ""),
    }


# ------------------------------------------------------------------ one workload
def _tail(text: str, n: int = 3) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-n:])[:300]


def _run(
    cmd: list[str], *, cwd: Path, log: Path, timeout: float, env=None, err: Path | None = None
) -> tuple[int | None, float]:
    """Run ``cmd`` with stdout to ``log`` and stderr to ``err`` (default: ``log`` too); (exit status, or
    None when it ran past ``timeout``, and seconds)."""
    t0 = time.monotonic()
    with open(log, "w") as out, open(err if err else os.devnull, "w") as errf:
        try:
            rc = subprocess.run(
                cmd, cwd=cwd, stdout=out, stderr=errf if err else subprocess.STDOUT, timeout=timeout, env=env
            ).returncode
        except subprocess.TimeoutExpired:
            rc = None
    return rc, time.monotonic() - t0


def _rfmodel_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _fmt(v, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    if isinstance(v, float):
        return f"{v:.{digits}f}".rstrip("0").rstrip(".") if digits else str(round(v))
    return str(v)


def trace_digest(folder: Path) -> str:
    """SHA-1 of a trace folder's files (names and bytes, in name order): the same digest, the same input to
    Accel-Sim."""
    import hashlib

    h = hashlib.sha1()
    for f in sorted(p for p in folder.iterdir() if p.is_file()):
        h.update(f.name.encode() + b"\0")
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:16]


def reusable_accelsim(old: dict | None, digest: str, as_commit: str) -> dict | None:
    """Accel-Sim's side of an earlier row (:data:`ACCELSIM_FIELDS`) when it ran the same trace (digest) with
    the same Accel-Sim (commit) and finished; else None."""
    if (
        old is None
        or not old.get("trace_digest")
        or old.get("trace_digest") != digest
        or old.get("accelsim_commit") != as_commit
        or not old.get("accelsim_cycles")
    ):
        return None
    return {k: old.get(k) for k in ACCELSIM_FIELDS}


def run_workload(
    cfg: Config,
    name: str,
    sim: AccelSim,
    work: Path,
    timeout: float,
    rf_commit: str,
    as_commit: str,
    keep_trace: bool = True,
    reuse: dict | None = None,
) -> dict:
    """Export, run both simulators and return the CSV row (``status`` says what failed).  The logs stay
    in ``work/<config>/<workload>/``, and the trace too with ``keep_trace``.  ``reuse``: an earlier row of
    this workload whose Accel-Sim side is taken instead of running Accel-Sim when the exported trace is the
    one it ran (:func:`reusable_accelsim`)."""
    slug = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    wdir = work / cfg.name / slug
    if wdir.exists():
        shutil.rmtree(wdir)
    trace = wdir / "trace"
    run = wdir / "run"
    run.mkdir(parents=True)
    row: dict = {
        "config": cfg.name,
        "workload": name,
        "num_sms": cfg.num_sms,
        "binary_version": cfg.binary_version,
        "rfmodel_commit": rf_commit,
        "accelsim_commit": as_commit,
    }
    env = _rfmodel_env()
    py = [sys.executable, "-m", "rfmodel.cli"]

    rc, _ = _run(
        py + ["workload", "export-accelsim", "--num-sms", str(cfg.num_sms), name, str(trace)],
        cwd=ROOT,
        log=wdir / "export.log",
        timeout=timeout,
        env=env,
    )
    if rc != 0:
        reason = "timed out" if rc is None else f"exit {rc}"
        note = f"{reason}: {_tail((wdir / 'export.log').read_text(errors='replace'))}"
        return row | {"status": "export-failed", "note": note}
    if cfg.binary_version != 70:
        for traceg in trace.glob("*.traceg"):
            set_binary_version(traceg, cfg.binary_version)
    row["trace_digest"] = trace_digest(trace)
    kept = reusable_accelsim(reuse, row["trace_digest"], as_commit)

    # GPGPU-Sim opens the interconnect (and power) files named in the config relative to its working folder
    for f in cfg.folder.iterdir():
        if f.is_file() and f.name not in ("gpgpusim.config", "trace.config"):
            (run / f.name).symlink_to(f.resolve())
    cmd = [
        str(sim.exe),
        "-trace",
        str(trace / "kernelslist.g"),
        "-config",
        str(cfg.gpgpusim_config.resolve()),
    ]
    if cfg.trace_config.is_file():
        cmd += ["-config", str(cfg.trace_config.resolve())]
    cmd += ["-gpgpu_kernel_launch_latency", "0"]
    if shutil.which("stdbuf"):  # line-buffered, so a message printed just before an abort() is kept
        cmd = ["stdbuf", "-oL", *cmd]
    if sim.env_sh is not None:
        cmd = ["bash", "-c", '. "$0" >/dev/null && exec "$@"', str(sim.env_sh)] + cmd
    as_log = wdir / "accelsim.log"
    notes = []
    if kept is not None:  # the same trace on the same Accel-Sim: its earlier answer
        a = {
            "cycles": int(float(kept["accelsim_cycles"])),
            "error": None,
            "warp_instructions": int(float(kept["accelsim_warp_instructions"]))
            if kept.get("accelsim_warp_instructions")
            else None,
        }
        rc = 0
        notes.append(
            f"Accel-Sim's result reused (same trace and Accel-Sim, row of {reuse.get('rfmodel_commit')})"
        )
    else:
        rc, as_s = _run(cmd, cwd=run, log=as_log, timeout=timeout)
        a = parse_accelsim(as_log.read_text(errors="replace"))
        row["accelsim_seconds"] = round(as_s, 1)
    as_ok = rc == 0 and a["error"] is None and a["cycles"]
    if kept is not None:
        row |= {k: v for k, v in kept.items() if v not in (None, "")}
    elif not as_ok:
        if rc is None:
            why = f"timed out after {timeout:g} s"
        elif a["error"] not in (None, "no normal exit"):
            why = a["error"]
        else:
            status = f"killed by signal {-rc}" if rc < 0 else f"exit {rc}"
            why = f"{status}, no normal exit; its output ends: {_tail(as_log.read_text(errors='replace'), 1)}"
        notes.append(f"Accel-Sim: {why}")
    else:
        row |= {
            "accelsim_cycles": a["cycles"],
            "accelsim_ipc": a["warp_instructions"] / a["cycles"] if a["warp_instructions"] else None,
            "accelsim_warp_instructions": a["warp_instructions"],
            "accelsim_l1d_hit_rate": a["l1d_hit_rate"],
            "accelsim_l1d_accesses": a["l1d_accesses"],
            "accelsim_l1d_kb": a["l1d_kb"],
            "accelsim_structural_share": a.get("structural_share"),
            "accelsim_dependency_share": a.get("dependency_share"),
            "accelsim_idle_share": a.get("idle_share"),
        }

    rf_log = wdir / "rfmodel.json"
    rc, rf_s = _run(
        py
        + [
            "simulate",
            "--workload",
            str(trace),
            "--compat",
            "gpgpusim",
            "--gpu",
            str(cfg.gpgpusim_config),
            "--json",
            "--quiet",
        ],
        cwd=ROOT,
        log=rf_log,
        timeout=timeout,
        env=env,
        err=wdir / "rfmodel.err",
    )
    row["rfmodel_seconds"] = round(rf_s, 1)
    rf = None
    if rc == 0:
        try:
            rf = parse_rfmodel(rf_log.read_text(errors="replace"))
        except (ValueError, KeyError) as e:
            notes.append(f"rfmodel: unreadable output ({e})")
    else:
        why = "timed out" if rc is None else f"exit {rc}"
        notes.append(f"rfmodel: {why}: {_tail((wdir / 'rfmodel.err').read_text(errors='replace'))}")
    if rf is not None:
        row |= {f"rfmodel_{k}": v for k, v in rf.items()}
    if as_ok and rf is not None:
        row["error_pct"] = 100.0 * (rf["cycles"] - a["cycles"]) / a["cycles"]
        if a["warp_instructions"] is not None and a["warp_instructions"] != rf["warp_instructions"]:
            notes.append(f"warp instructions differ ({rf['warp_instructions']} / {a['warp_instructions']})")
        row["status"] = "ok"
    else:
        row["status"] = (
            "both-failed"
            if not as_ok and rf is None
            else ("accelsim-failed" if not as_ok else "rfmodel-failed")
        )
    row["note"] = "; ".join(notes)
    if not keep_trace:
        shutil.rmtree(trace, ignore_errors=True)
    return row


# ------------------------------------------------------------------ CSV and provenance
def read_rows(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_rows(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: _fmt(r.get(k)) if not isinstance(r.get(k), str) else r[k] for k in FIELDS})
    os.replace(tmp, path)


def rfmodel_commit() -> str:
    """HEAD of the checkout, ``+dirty`` when the package has uncommitted changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "rfmodel"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


# ------------------------------------------------------------------ summary and docs
def _num(v) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def summarize(rows: list[dict]) -> dict:
    """Median |error| (%), how many within 10 %, the three worst, and the failures."""
    ok = [r for r in rows if r.get("status") == "ok" and _num(r.get("error_pct")) is not None]
    errs = [abs(_num(r["error_pct"])) for r in ok]
    worst = sorted(ok, key=lambda r: -abs(_num(r["error_pct"])))[:3]
    return {
        "n": len(rows),
        "n_ok": len(ok),
        "median_abs_error_pct": statistics.median(errs) if errs else None,
        "within_10": sum(e <= 10.0 for e in errs),
        "worst": [(r["workload"], _num(r["error_pct"])) for r in worst],
        "failed": [
            (r["workload"], r.get("status", ""), r.get("note", "")) for r in rows if r.get("status") != "ok"
        ],
    }


def _pair(a, b, digits: int) -> str:
    a, b = _num(a), _num(b)
    if a is None and b is None:
        return "–"
    fa = "–" if a is None else (f"{a:.{digits}f}" if digits else f"{a:.0f}")
    fb = "–" if b is None else (f"{b:.{digits}f}" if digits else f"{b:.0f}")
    return f"{fa} / {fb}"


def _wrap(text: str, width: int = 110) -> list[str]:
    """Lines of at most ``width`` characters that never break inside a `code span`."""
    parts = re.split(r"(`[^`]*`)", text)
    # code spans and "<number> %" / "<number> KB" stay on one line
    glued = "".join(
        p.replace(" ", "\0") if p.startswith("`") else re.sub(r"(?<=\d) (%|KB)", "\0\\1", p) for p in parts
    )
    lines = textwrap.wrap(glued, width, break_on_hyphens=False, break_long_words=False)
    return [ln.replace("\0", " ") for ln in lines]


def render_table(cfg_name: str, rows: list[dict], meta: dict) -> str:
    s = summarize(rows)
    base, _, tag = cfg_name.partition(".")
    lines = [f"### {base}" + (", the papers' benchmarks" if tag == "papers" else ""), ""]
    full = meta.get("num_sms")
    bv = meta.get("binary_version")
    commands = meta.get("commands") or [meta.get("command", "?")]
    made_by = ", then ".join(f"`{c}`" for c in commands)
    lines += _wrap(
        f"One SM's share of {full} SMs, trace binary version {bv}; "
        f"rfmodel {meta.get('rfmodel_commit', '?')}, made by {made_by} "
        f"on {meta.get('date', '?')}."
    )
    lines.append("")
    kbs = sorted({int(k) for k in (_num(r.get("accelsim_l1d_kb")) for r in rows) if k is not None})
    l1 = (
        ""
        if not kbs
        else (
            f" Accel-Sim's L1D held {kbs[0]}" + (f"-{kbs[-1]}" if kbs[-1] != kbs[0] else "") + " KB (its "
            "`Reconfigure L1 cache` line: the unified capacity less the CTAs' shared memory)"
            + (
                ", rfmodel's the same carve-out (`l1d.shmem_options` from the config)."
                if meta.get("rfmodel_l1d_carved")
                else f", rfmodel's {meta['rfmodel_l1d_kb']:g} KB."
                if meta.get("rfmodel_l1d_kb") is not None
                else "."
            )
        )
    )
    limits = meta.get("rfmodel_not_modelled")
    if limits:
        lines += _wrap(
            "rfmodel's simulator does not model, on this configuration: " + "; ".join(limits) + "." + l1
        )
        lines.append("")
    elif l1:
        lines += _wrap(l1.strip())
        lines.append("")
    if s["median_abs_error_pct"] is not None:
        worst = ", ".join(f"`{w}` {e:+.1f} %" for w, e in s["worst"])
        lines += _wrap(
            f"**Summary:** median |error| {s['median_abs_error_pct']:.1f} %, {s['within_10']} of {s['n_ok']} "
            f"within 10 %; worst: {worst}."
            + (f" {len(s['failed'])} of {s['n']} did not complete (below)." if s["failed"] else "")
        )
    else:
        lines.append(f"**Summary:** no workload completed in both simulators ({s['n']} tried).")
    lines += [
        "",
        "| workload | cycles (rfmodel / Accel-Sim) | error | IPC (rfmodel / Accel-Sim) "
        "| L1D hit rate (rfmodel / Accel-Sim) | structural-stall share (rfmodel / Accel-Sim) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        err = _num(r.get("error_pct"))
        lines.append(
            f"| `{r['workload']}` | {_pair(r.get('rfmodel_cycles'), r.get('accelsim_cycles'), 0)} "
            f"| {'–' if err is None else f'{err:+.1f} %'} "
            f"| {_pair(r.get('rfmodel_ipc'), r.get('accelsim_ipc'), 3)} "
            f"| {_pair(r.get('rfmodel_l1d_hit_rate'), r.get('accelsim_l1d_hit_rate'), 3)} "
            f"| {_pair(r.get('rfmodel_structural_share'), r.get('accelsim_structural_share'), 3)} |"
        )
    if s["failed"]:
        lines += ["", "Did not complete:", ""]
        lines += [f"- `{w}` ({st}): {note or 'no reason recorded'}" for w, st, note in s["failed"]]
    return "\n".join(lines) + "\n"


def render_section(tables: list[tuple[str, list[dict], dict]]) -> str:
    commits = next((m.get("accelsim_commits") for _, _, m in tables if m.get("accelsim_commits")), {}) or {}
    intro = (
        "Generated by `calib/accelsim.py` (rerun it to regenerate this section; each configuration's "
        "rows are in `calib/accelsim/<config>.csv`). Every built-in workload and synthetic preset (and, in "
        "the tables of the papers' benchmarks, `--suite papers`, `<config>.papers.csv`, each of those) is "
        "exported with `rfmodel workload export-accelsim --num-sms N` (one SM's share of the full GPU's "
        "`N` SMs), run in Accel-Sim on the one-SM configuration, and simulated by `rfmodel simulate "
        "--compat gpgpusim --gpu <config>/gpgpusim.config` on the same trace directory. Error = "
        "(rfmodel - Accel-Sim) / Accel-Sim cycles. IPC is warp instructions per cycle for both "
        "(Accel-Sim's `gpgpu_n_tot_w_icount` / `gpu_tot_sim_cycle`). Accel-Sim's L1D hit rate is "
        "1 - `L1D_total_cache_misses` / `L1D_total_cache_accesses` (sector misses count as misses, "
        "pending hits as hits). The structural-stall share is the part of the schedulers' cycles "
        "without an issue in which an instruction was ready but could not go (Accel-Sim's `Stall` of "
        "its warp-occupancy line against `W0_Idle` and `W0_Scoreboard`; rfmodel's `no_free_collector` "
        "+ `bank_conflict` + `exec_unit_busy` among its stall reasons). Accel-Sim's "
        "`gpu_reg_bank_conflict_stalls` is printed but never incremented in this GPGPU-Sim version, "
        "so bank-conflict stalls are not compared."
    )
    head = [SECTION, "", *_wrap(intro), ""]
    if commits:
        head += [
            *_wrap(
                "Accel-Sim: accel-sim-framework `"
                + commits.get("accel-sim-framework", "unknown")
                + "`, gpgpu-sim_distribution `"
                + commits.get("gpgpu-sim_distribution", "unknown")
                + "`."
            ),
            "",
        ]
    if any(name.startswith("SM2_GTX480") for name, _, _ in tables):
        gtx = (
            "`SM2_GTX480_1SM` is `calib/accelsim/configs/SM2_GTX480_1SM/` (its README says what differs from "
            "GPGPU-Sim's `SM2_GTX480`): Accel-Sim has no trace-mode config for Fermi, so its `trace.config` "
            "is derived from the PTX-mode timings, power simulation is off (this GPGPU-Sim rejects the "
            "GPUWattch option), and its traces carry binary version 61 (Pascal's opcode map) so that `BRA` "
            "is an ordinary branch on the SP pipelines instead of needing Volta's branch unit. Unlike "
            "`SM7_QV100` (`-gpgpu_perfect_inst_const_cache 1`), it keeps GPGPU-Sim's 2 KB instruction cache "
            "(`-gpgpu_cache:il1 N:4:128:4`) and fetch throughput 1, which both simulators model (rfmodel's "
            "`SMSpec.icache`, read from the config); the schedulers' share of cycles with no valid "
            "instruction (Accel-Sim's `W0_Idle`, rfmodel's `no_ready_warp`) is where instruction misses "
            "show. The SM has 32768 registers: a workload whose CTA needs more cannot run "
            "on it in either simulator (listed as not completed)."
        )
        head += [*_wrap(gtx), ""]
    body = [render_table(name, rows, meta) for name, rows, meta in tables]
    return "\n".join(head) + "\n" + "\n".join(body)


def replace_section(path: str | os.PathLike, section: str) -> None:
    """Replace the generated section (up to the next ``## `` heading) or add it after the hand-written
    "Simulator against Accel-Sim" section, else at the end."""
    p = Path(path)
    text = p.read_text() if p.is_file() else ""
    section = section.rstrip("\n") + "\n"
    head = SECTION + "\n"
    if head in text:
        a = text.index(head)
        b = text.find("\n## ", a + len(head))
        text = text[:a] + section + ("" if b < 0 else text[b:])
    elif ANCHOR in text and (text.startswith(ANCHOR) or "\n" + ANCHOR in text):
        a = text.index(ANCHOR)
        b = text.find("\n## ", a + len(ANCHOR))
        if b < 0:
            text = text.rstrip("\n") + "\n\n" + section
        else:
            text = text[: b + 1] + section + "\n" + text[b + 1 :]
    else:
        text = (text.rstrip("\n") + "\n\n" if text.strip() else "") + section
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(text if text.endswith("\n") else text + "\n")
    os.replace(tmp, p)


def load_tables(out: Path, names: list[str]) -> list[tuple[str, list[dict], dict]]:
    """Each configuration's rows and provenance found in ``out``: the default ones first, then the others."""
    order = list(dict.fromkeys([*DEFAULT_CONFIGS, *names, *sorted(p.stem for p in out.glob("*.csv"))]))
    tables = []
    for n in order:
        rows = read_rows(out / f"{n}.csv")
        if not rows:
            continue
        meta_path = out / f"{n}.json"
        meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
        tables.append((n, rows, meta))
    return tables


# ------------------------------------------------------------------ main
#: the file-name tag of each suite's table (``--suite``)
SUITE_TAG = {"builtin": "", "papers": ".papers"}


def workload_names(which: str = "builtin") -> list[str]:
    """The workloads of ``which`` suite: the built-in kernels and the synthetic presets, or the papers'
    benchmarks."""
    from rfmodel.workload import suite

    if which == "papers":
        return list(suite.suite_names("papers"))
    names = list(suite.builtin_names())
    synthetic = getattr(suite, "synthetic_names", None)
    if synthetic is not None:
        names += [n for n in synthetic() if n not in names]
    return names


def _command(argv: list[str]) -> str:
    return shlex.join(["python", "calib/accelsim.py", *argv])


def engine_limits(cfg: Config) -> dict:
    """What rfmodel's simulate engine answers differently on this config (``not_modelled``), and its L1D."""
    import warnings

    from rfmodel.spec.gpgpusim import from_gpgpusim_config
    from rfmodel.spec.occupancy import not_modelled

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sm = from_gpgpusim_config(cfg.gpgpusim_config)
        limits = not_modelled(sm, "simulate", compat=True)
    return {
        "rfmodel_not_modelled": limits,
        "rfmodel_l1d_kb": sm.l1d.size_bytes / 1024,
        "rfmodel_l1d_carved": bool(sm.l1d.adaptive and sm.l1d.shmem_options),
    }


def run_config(
    cfg: Config,
    workloads: list[str],
    sim: AccelSim,
    out: Path,
    work: Path,
    *,
    jobs: int,
    timeout: float,
    force: bool,
    retry_failed: bool,
    command: str,
    keep_trace: bool = True,
    suite: str = "builtin",
    reuse_accelsim: bool = False,
) -> list[dict]:
    """Run ``workloads`` on ``cfg`` in both simulators (those already in the CSV at this commit kept), writing
    each row as it completes: ``<config>.csv`` for the built-in suite, ``<config>.papers.csv`` for the
    papers' benchmarks (their own table)."""
    table = cfg.name + SUITE_TAG[suite]
    csv_path = out / f"{table}.csv"
    rf_commit = rfmodel_commit()
    commits = sim.commits()
    as_commit = commits["accel-sim-framework"][:12] + "/" + commits["gpgpu-sim_distribution"][:12]
    existing = {r["workload"]: r for r in read_rows(csv_path)}
    todo = []
    for n in workloads:
        r = existing.get(n)
        keep = (
            r is not None
            and not force
            and not reuse_accelsim
            and r.get("rfmodel_commit") == rf_commit
            and r.get("accelsim_commit") == as_commit
            and (r.get("status") == "ok" or not retry_failed)
        )
        if not keep:
            todo.append(n)
    print(
        f"{cfg.name}: {cfg.num_sms} SMs exported, binary version {cfg.binary_version}; "
        f"{len(workloads) - len(todo)} of {len(workloads)} already in {csv_path}",
        flush=True,
    )
    # the commands whose rows the CSV holds: earlier ones are kept while some of their rows are
    meta_path = out / f"{table}.json"
    old = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    commands = old.get("commands", [old["command"]] if "command" in old else [])
    if len(todo) == len(workloads) and not existing.keys() - set(todo):
        commands = []
    if not commands or commands[-1] != command:
        commands.append(command)
    meta = {
        "config": cfg.name,
        "folder": _rel(cfg.folder),
        "num_sms": cfg.num_sms,
        **engine_limits(cfg),
        "binary_version": cfg.binary_version,
        "rfmodel_commit": rf_commit,
        "accelsim_commits": commits,
        "commands": commands,
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
    }
    out.mkdir(parents=True, exist_ok=True)
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")

    rows = dict(existing)
    lock = threading.Lock()
    order = {n: i for i, n in enumerate(workloads)}

    def save():
        ordered = sorted(rows.values(), key=lambda r: (order.get(r["workload"], len(order)), r["workload"]))
        write_rows(csv_path, ordered)

    def one(n: str) -> None:
        try:
            row = run_workload(
                cfg,
                n,
                sim,
                work,
                timeout,
                rf_commit,
                as_commit,
                keep_trace,
                reuse=existing.get(n) if reuse_accelsim else None,
            )
        except Exception as e:  # keep going: the row records what went wrong
            row = {
                "config": cfg.name,
                "workload": n,
                "status": "error",
                "note": f"{type(e).__name__}: {e}",
                "rfmodel_commit": rf_commit,
                "accelsim_commit": as_commit,
            }
        with lock:
            rows[n] = row
            save()
            err = _num(row.get("error_pct"))
            print(
                f"  {n:32s} {row['status']:16s}"
                + (
                    f" {_fmt(row.get('rfmodel_cycles'), 0)} / {_fmt(row.get('accelsim_cycles'), 0)} cycles"
                    f" {err:+.1f} %"
                    if err is not None
                    else f" {row.get('note', '')}"
                ),
                flush=True,
            )

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        list(ex.map(one, todo))
    save()
    return [rows[n] for n in workloads if n in rows]


def _rel(p: Path) -> str:
    """``p`` relative to the checkout (``../`` for its siblings), else absolute."""
    p = p.resolve()
    for base, prefix in ((ROOT, ""), (ROOT.parent, "../")):
        if p.is_relative_to(base):
            return prefix + str(p.relative_to(base))
    return str(p)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--config",
        action="append",
        help=f"{' | '.join(CONFIGS)} | a one-SM config folder (repeatable; default: both names)",
    )
    ap.add_argument("--workload", action="append", help="repeatable; default: every workload of --suite")
    ap.add_argument(
        "--suite",
        choices=tuple(SUITE_TAG),
        default="builtin",
        help="the built-in kernels and synthetic presets (default), or the papers' benchmarks "
        "(their own table, <config>.papers.csv)",
    )
    ap.add_argument("--num-sms", type=int, help="SMs of the full GPU (default: read from its config)")
    ap.add_argument("--jobs", type=int, default=1, help="workloads run at once (default 1)")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per simulator run (default 3600)")
    ap.add_argument("--out", default=str(ROOT / "calib" / "accelsim"))
    ap.add_argument(
        "--validation-doc",
        default=str(ROOT / "docs" / "validation.md"),
        help="the doc whose generated section is replaced ('' to leave docs alone)",
    )
    ap.add_argument("--env", help="Accel-Sim's env.sh (default: found beside the build of $ACCELSIM)")
    ap.add_argument(
        "--work", help="folder for traces and logs (default: a temporary one, removed at the end)"
    )
    ap.add_argument("--force", action="store_true", help="rerun workloads already in the CSV")
    ap.add_argument("--retry-failed", action="store_true", help="rerun workloads whose row is a failure")
    ap.add_argument(
        "--reuse-accelsim",
        action="store_true",
        help="rerun rfmodel's side of every named workload, taking Accel-Sim's from its row in "
        "the CSV where that row ran the same exported trace (its trace_digest) on the same "
        "Accel-Sim; after a change of rfmodel's simulator only",
    )
    a = ap.parse_args(argv)
    try:
        if a.jobs < 1 or a.timeout <= 0 or (a.num_sms is not None and a.num_sms < 1):
            raise UsageError("--jobs, --timeout and --num-sms must be positive")
        sim = find_accelsim(a.env)
        configs = [resolve_config(c, a.num_sms) for c in (a.config or DEFAULT_CONFIGS)]
        known = workload_names("builtin") + workload_names("papers")
        workloads = a.workload or workload_names(a.suite)
        unknown = [w for w in workloads if w not in known and not Path(w).exists()]
        if unknown:
            raise UsageError(f"unknown workload(s): {', '.join(unknown)}")
    except UsageError as e:
        print(f"calib/accelsim.py: {e}", file=sys.stderr)
        return 2

    out = Path(a.out)
    command = _command(argv)
    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="accelsim-compare-"))
    print(f"Accel-Sim {sim.exe} (env {sim.env_sh}); traces and logs in {work}", flush=True)
    try:
        for cfg in configs:
            rows = run_config(
                cfg,
                workloads,
                sim,
                out,
                work,
                jobs=a.jobs,
                timeout=a.timeout,
                force=a.force,
                retry_failed=a.retry_failed,
                command=command,
                keep_trace=bool(a.work),
                suite=a.suite,
                reuse_accelsim=a.reuse_accelsim,
            )
            s = summarize(rows)
            if s["median_abs_error_pct"] is not None:
                print(
                    f"{cfg.name}{SUITE_TAG[a.suite]}: median |error| {s['median_abs_error_pct']:.1f} %, "
                    f"{s['within_10']} of "
                    f"{s['n_ok']} within 10 %, worst "
                    + ", ".join(f"{w} {e:+.1f} %" for w, e in s["worst"])
                    + (f"; {len(s['failed'])} failed" if s["failed"] else ""),
                    flush=True,
                )
        if a.validation_doc:
            replace_section(a.validation_doc, render_section(load_tables(out, [c.name for c in configs])))
            print(f"updated {a.validation_doc}", flush=True)
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
