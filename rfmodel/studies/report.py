"""A study's report folder: ``report.md`` (what was run, the claim table, the summary tables, the figures),
PNG figures drawn with matplotlib's Agg canvas (no display, no global pyplot state), and every run's data as
``runs.csv`` and ``runs.nc`` (one xarray Dataset over the study's dimensions)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np

from rfmodel.io import write_figure, write_netcdf, write_text

#: what a figure's series are drawn with: the papers' figures are grouped bars in greys and a few colours
COLORS = (
    "#4d4d4d",
    "#9e9e9e",
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
)


def commit() -> str:
    """The package's commit (``git describe --always --tags`` of the checkout it runs from, ``-dirty`` where
    a file of the package itself differs from it: a study's evaluations depend on nothing else, so the docs
    it writes do not count), else its version."""
    from rfmodel.version import __version__

    package = Path(__file__).resolve().parent.parent

    def git(*args):
        try:
            r = subprocess.run(["git", "-C", str(package), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return r.stdout.strip() if r.returncode == 0 else None

    rev = git("describe", "--always", "--tags")
    if not rev:
        return f"rfmodel {__version__}"
    if git("status", "--porcelain", "--", "."):
        rev += "-dirty"
    return f"{rev} (rfmodel {__version__})"


def progress(study: str, message: str) -> None:
    """What the study is doing, on stderr."""
    print(f"{study}: {message}", file=sys.stderr, flush=True)


def _cell(x) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def _flat(record: dict, prefix: str = "") -> dict:
    """A run record with nested dicts flattened (``counts.reads`` -> ``counts_reads``); lists left out."""
    out = {}
    for k, v in record.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flat(v, f"{name}_"))
        elif isinstance(v, list | tuple):
            continue
        else:
            out[name] = v
    return out


#: the grades of a claim, best first (``none``: no figure)
GRADES = ("match", "partial", "mismatch", "fact", "none")

#: the verdict phrases the studies write (:func:`rfmodel.studies.common.verdict` and the studies' own), by
#: the start of the phrase, and their grade
_PHRASES = (
    ("same sign, within", "match"),
    ("no change, as the paper's", "match"),
    ("same sign, size differs", "partial"),
    ("same sign", "partial"),
    ("within the paper's range", "match"),
    ("within 5 %", "match"),
    ("same ordering", "match"),
    ("below 0.3 %, as the paper's", "match"),
    ("outside the paper's range", "partial"),
    ("sign differs", "mismatch"),
    ("a change where the paper has none", "mismatch"),
    ("no change here", "mismatch"),
    ("more than 5 % apart", "mismatch"),
    ("ordering differs", "mismatch"),
    ("above the paper's", "mismatch"),
    # the state of a study's own checks, in rows that are not claims
    ("hold", "none"),
    ("broken", "none"),
)


def grade(verdict: str, *, strict: bool = True) -> str:
    """The grade of a study's verdict text: ``match``, ``partial``, ``mismatch``, or ``none`` where it gives
    no verdict (``""``, ``n/a``).  A verdict of several figures (``"...; ..."``) is ``match`` or ``mismatch``
    when all its parts are, else ``partial``; a phrase this function does not know is an error (with
    ``strict``; else ``"unknown"``), so that no verdict is graded by accident."""
    parts = [p.strip() for p in str(verdict).split(";")]
    grades = []
    for p in parts:
        if p in ("", "n/a") or p.startswith("n/a"):
            continue
        for start, g in _PHRASES:
            if p.startswith(start):
                grades.append(g)
                break
        else:
            if not strict:
                return "unknown"
            raise ValueError(f"unknown verdict phrase {p!r} (known: {', '.join(s for s, _ in _PHRASES)})")
    grades = [g for g in grades if g != "none"]
    if not grades:
        return "none"
    if all(g == grades[0] for g in grades):
        return grades[0]
    return "partial"


class Report:
    """What a study reports, collected as it computes, written by :meth:`write`."""

    def __init__(self, out: Path, study: str, command: str, *, title: str):
        self.out, self.study, self.command, self.title = Path(out), study, command, title
        self.meta: dict[str, str] = {}
        self.claims: list[dict] = []
        self.figures: list[tuple[str, str]] = []
        self.sections: list[tuple[str, str]] = []
        self.files: list[str] = []

    # ------------------------------------------------------------------ contents
    def describe(self, **meta) -> None:
        """What was run: GPU, designs, workloads ... (lists are joined)."""
        for k, v in meta.items():
            self.meta[k] = ", ".join(map(str, v)) if isinstance(v, list | tuple) else str(v)

    def claim(self, cid: str, what: str, paper, ours, verdict: str = "", note: str = "") -> None:
        """A claim of the paper beside the study's figure: ID, what is compared, the paper's figure, ours,
        the verdict and the study's explanation, if any."""
        self.claims.append(
            {
                "claim": cid,
                "what": what,
                "paper": str(paper),
                "ours": str(ours),
                "verdict": verdict,
                "grade": grade(verdict, strict=False),
                "note": note,
            }
        )

    def section(self, title: str, markdown: str) -> None:
        self.sections.append((title, markdown))

    # ------------------------------------------------------------------ figures
    def _save(self, fig, name: str, caption: str) -> None:
        write_figure(fig, self.out / name, dpi=110)  # atomically, never onto a pipe or device
        self.figures.append((name, caption))

    def bars(
        self,
        name: str,
        caption: str,
        categories,
        series: dict,
        *,
        ylabel: str,
        ref: float | None = 1.0,
        mean: str | None = "geomean",
        title: str = "",
    ) -> None:
        """Grouped bars: per category (benchmark) one bar per series (design), with the series' mean as the
        last group (``geomean``, ``hmean`` or ``mean``), and a dashed line at ``ref`` (the baseline)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        cats = list(categories)
        data = {k: [np.nan if v is None else float(v) for v in vs] for k, vs in series.items()}
        if mean:
            cats.append(mean)
            for vs in data.values():
                vs.append(_mean(vs, mean))
        n = max(len(data), 1)
        width = 0.8 / n
        fig = Figure(figsize=(max(6.0, 0.22 * len(cats) * n + 2), 3.6))
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        x = np.arange(len(cats))
        for i, (k, vs) in enumerate(data.items()):
            ax.bar(
                x - 0.4 + width * (i + 0.5),
                vs,
                width,
                label=k,
                color=COLORS[i % len(COLORS)],
                edgecolor="black",
                linewidth=0.3,
            )
        if ref is not None:
            ax.axhline(ref, color="black", linestyle="--", linewidth=0.8)
        ax.set_xticks(x, cats, rotation=60, ha="right", fontsize=7)
        ax.set_xlim(-0.6, len(cats) - 0.4)
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7, ncols=min(n, 6), loc="upper left", bbox_to_anchor=(0, 1.18), frameon=False)
        ax.grid(axis="y", linewidth=0.3)
        fig.tight_layout()
        self._save(fig, name, caption)

    def lines(
        self,
        name: str,
        caption: str,
        x,
        series: dict,
        *,
        xlabel: str,
        ylabel: str,
        ref: float | None = 1.0,
        title: str = "",
        xlog: bool = False,
    ) -> None:
        """One line with markers per series (design) over ``x`` (a sweep)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(5.5, 3.6))
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        markers = "osD^v<>ph*x"
        for i, (k, vs) in enumerate(series.items()):
            ys = [np.nan if v is None else float(v) for v in vs]
            ax.plot(list(x), ys, marker=markers[i % len(markers)], label=k, color=COLORS[i % len(COLORS)])
        if ref is not None:
            ax.axhline(ref, color="black", linestyle="--", linewidth=0.8)
        if xlog:
            ax.set_xscale("log", base=2)
        ax.set_xticks(list(x), [f"{v:g}" for v in x])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7, frameon=False)
        ax.grid(linewidth=0.3)
        fig.tight_layout()
        self._save(fig, name, caption)

    # ------------------------------------------------------------------ data
    def data(self, records, dims: list[str], *, name: str = "runs") -> None:
        """Every run as ``NAME.csv`` (one row each, nested counts flattened) and ``NAME.nc``: one Dataset
        indexed by ``dims`` (a dimension each), every numeric result a variable over them."""
        import pandas as pd

        rows = [_flat({k: v for k, v in r.items() if k != "key"}) for r in records]
        if not rows:
            return
        df = pd.DataFrame(rows)
        write_text(self.out / f"{name}.csv", df.to_csv(index=False))
        for d in dims:
            df[d] = df[d].map(lambda v: "all" if v is None or (isinstance(v, float) and math.isnan(v)) else v)
        num = [c for c in df.columns if c not in dims and pd.api.types.is_numeric_dtype(df[c])]
        text = [
            c
            for c in df.columns
            if c not in dims and c not in num and df[c].map(lambda v: v is None or isinstance(v, str)).all()
        ]
        df = df.drop_duplicates(subset=dims, keep="last").set_index(dims)
        ds = df[num + text].astype({c: float for c in num if df[c].dtype == bool}).to_xarray()
        for c in text:
            ds[c] = ds[c].fillna("").astype(str)
        ds.attrs.update(
            {
                "study": self.study,
                "command": self.command,
                "commit": commit(),
                **{k: v for k, v in self.meta.items()},
            }
        )
        write_netcdf(ds, self.out / f"{name}.nc")
        self.files += [f"{name}.csv", f"{name}.nc"]

    # ------------------------------------------------------------------ report.md
    def write(self) -> Path:
        L = [f"# {self.title}\n\n"]
        L.append("| run | |\n| --- | --- |\n")
        L.append(f"| command | `{_cell(self.command)}` |\n| commit | {_cell(commit())} |\n")
        for k, v in self.meta.items():
            L.append(f"| {k} | {_cell(v)} |\n")
        L.append("\n")
        if self.claims:
            L.append(
                "## Claims\n\n| claim | what | paper | ours | verdict | explanation |\n"
                "| --- | --- | --- | --- | --- | --- |\n"
            )
            for c in self.claims:
                L.append(
                    "| "
                    + " | ".join(_cell(c[k]) for k in ("claim", "what", "paper", "ours", "verdict", "note"))
                    + " |\n"
                )
            L.append("\n")
        if self.figures:
            L.append("## Figures\n\n")
            for f, caption in self.figures:
                L.append(f"![{caption}]({f})\n\n*{caption}*\n\n")
        for title, md in self.sections:
            L.append(f"## {title}\n\n{md.rstrip()}\n\n")
        if self.claims:
            self._write_claims()
        files = ["runs.jsonl (the run log: a rerun resumes from it)", *self.files, "summary.md"]
        L.append("## Files\n\n" + "".join(f"- {f}\n" for f in files))
        path = self.out / "report.md"
        write_text(path, "".join(L))
        progress(self.study, f"report: {path}")
        return path

    def _write_claims(self) -> None:
        """``claims.csv``: the claim rows with their grades (:func:`rfmodel.studies.claims.grade`), the
        study, its command and commit: what ``rfmodel study claims`` gathers."""
        import csv
        import io

        buf = io.StringIO(newline="")
        cols = ["claim", "what", "paper", "ours", "verdict", "grade", "note", "study", "command", "commit"]
        w = csv.DictWriter(buf, cols)
        w.writeheader()
        here = {"study": self.study, "command": self.command, "commit": commit()}
        for c in self.claims:
            w.writerow({**c, **here})
        write_text(self.out / "claims.csv", buf.getvalue())
        self.files.append("claims.csv")


def _mean(vs, how: str) -> float:
    xs = [v for v in vs if v is not None and not math.isnan(v)]
    if how in ("geomean", "hmean"):
        xs = [v for v in xs if v > 0]
    if not xs:
        return float("nan")
    if how == "geomean":
        return float(np.exp(np.mean(np.log(xs))))
    if how == "hmean":
        return len(xs) / sum(1.0 / v for v in xs)
    return float(np.mean(xs))
