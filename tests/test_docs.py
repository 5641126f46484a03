"""The docs tell the truth about the command line and the Python API.

Every ``rfmodel ...`` command in README.md, docs/ and studies/ names commands and options that exist (a
command on a line of its own in a code block parses whole, as the shell would run it; a command quoted in
prose, or a usage synopsis with ``[...]`` and ``|``, is checked word by word), and every Python block runs,
unless the line before it says why it does not (``<!-- not run: REASON -->``).
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "studies").glob("*.md"))]
FENCE = re.compile(r"^```([a-z]*)\n(.*?)^```", re.S | re.M)
NOT_RUN = re.compile(r"<!-- not run: ([^>]+?) -->\s*$")


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _strip_comment(line: str) -> str:
    return re.split(r"\s#\s|\s{2,}#", line, maxsplit=1)[0].strip()


def doc_commands() -> list[tuple[str, str, bool]]:
    """``(file:line, command, whole)`` of every ``rfmodel`` command in the docs; ``whole``: on a line of its
    own in a code block (parsed whole) rather than quoted in prose."""
    out = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        spans = []
        for m in FENCE.finditer(text):
            spans.append(m.span())
            first = text.count("\n", 0, m.start(2)) + 1
            for k, line in enumerate(m.group(2).splitlines()):
                s = line.strip().removeprefix("$ ")
                if s.startswith("rfmodel ") and not s.endswith("\\"):
                    out.append((f"{_rel(path)}:{first + k}", _strip_comment(s), True))
        for m in re.finditer(r"`(rfmodel [^`]+)`", text):
            if not any(a <= m.start() < b for a, b in spans):
                line = text.count("\n", 0, m.start()) + 1
                out.append((f"{_rel(path)}:{line}", " ".join(m.group(1).split()), False))
    return out


def _subcommands(parser):
    import argparse

    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return a.choices
    return None


def _synopsis(words: list[str]) -> bool:
    return any(c in w for w in words for c in "[]|") or "..." in words


def word_errors(command: str) -> list[str]:
    """What in ``command`` names no command or option of the CLI, read word by word (placeholders in capitals
    and option values are not checked; after ``study NAME``, the study's own options are)."""
    from rfmodel import studies
    from rfmodel.cli import build_parser

    words = command.split()[1:]
    parser, prog, errors = build_parser(), "rfmodel", []
    skip = False
    for raw in words:
        w = raw.strip("[]").rstrip(".,;:")
        if skip or not w or w == "..":
            skip = False
            continue
        if w.startswith("-") and not re.fullmatch(r"-?\d.*", w):
            opt = w.split("=", 1)[0]
            action = parser._option_string_actions.get(opt)
            if action is None:
                errors.append(f"'{opt}' is not an option of '{prog}'")
                continue
            skip = "=" not in w and action.nargs != 0
            continue
        subs = _subcommands(parser)
        if prog == "rfmodel study" and w in studies.names():
            parser, prog = studies.parser(w, f"rfmodel study {w}"), f"rfmodel study {w}"
        elif prog == "rfmodel study":
            parser = None
            break  # a placeholder for the study: its options are not known
        elif subs is not None:
            alts = w.split("|")
            if all(a in subs for a in alts):
                parser, prog = subs[alts[0]], f"{prog} {alts[0]}"
            elif w.isupper() or not re.fullmatch(r"[a-z][a-z0-9-]*(\|[a-z][a-z0-9-]*)*", w):
                break  # a placeholder (COMMAND) or a value: what follows cannot be placed
            else:
                errors.append(f"'{w}' is not a command of '{prog}'")
                break
    return errors


def parse_errors(command: str) -> str:
    """The CLI's own usage error for ``command``, parsed whole (empty when it parses)."""
    from rfmodel import studies
    from rfmodel.cli import build_parser

    argv = shlex.split(command)[1:]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            args = build_parser().parse_args(argv)
            if getattr(args, "command", None) == "study" and args.name in studies.names():
                studies.parser(args.name, f"rfmodel study {args.name}").parse_args(args.options)
    except SystemExit as e:
        return err.getvalue().strip() if e.code else ""
    return ""


COMMANDS = doc_commands()


def test_the_docs_hold_commands_to_check():
    assert len(COMMANDS) > 100 and sum(whole for *_, whole in COMMANDS) > 30


@pytest.mark.parametrize(("where", "command", "whole"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_documented_command_names_what_exists(where, command, whole):
    assert not word_errors(command), (where, command, word_errors(command))
    if whole and not _synopsis(command.split()):
        assert not parse_errors(command), (where, command, parse_errors(command))


def test_the_command_check_catches_what_does_not_exist():
    assert word_errors("rfmodel tech papers") == ["'papers' is not a command of 'rfmodel tech'"]
    assert word_errors("rfmodel evaluate --no-such-option 3") == [
        "'--no-such-option' is not an option of 'rfmodel evaluate'"
    ]
    assert word_errors("rfmodel study ltrf --quick --no-such") == [
        "'--no-such' is not an option of 'rfmodel study ltrf'"
    ]
    assert word_errors("rfmodel evaluate|simulate --design stt --preset NAME") == []
    assert word_errors("rfmodel --design-file my.py evaluate --design x") == []
    assert "expected one argument" in parse_errors("rfmodel evaluate --level")


# ----------------------------------------------------------------------------- Python blocks
def doc_python_blocks() -> list[tuple[str, str, str | None]]:
    """``(file:line, code, reason it is not run or None)`` of every ```python block."""
    out = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            if m.group(1) != "python":
                continue
            before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
            reason = NOT_RUN.search(before)
            out.append(
                (
                    f"{_rel(path)}:{text.count(chr(10), 0, m.start()) + 1}",
                    m.group(2),
                    reason.group(1) if reason else None,
                )
            )
    return out


BLOCKS = doc_python_blocks()


@pytest.mark.parametrize(("where", "code", "reason"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_a_documented_python_block_runs(where, code, reason, tmp_path):
    """Each block runs in a fresh interpreter, in an empty folder (what it writes stays there)."""
    if reason is not None:
        pytest.skip(f"not run: {reason}")
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, f"{where}:\n{out.stderr[-3000:]}"
