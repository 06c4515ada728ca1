"""The `stepbench` tool, asked for what numbers mean: the scripts read its JSON and decide nothing."""
from __future__ import annotations

import contextlib
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ToolError(Exception):
    """The tool could not answer: its own message (it names the file and what to do)."""


def binary():
    """$STEPBENCH_BIN, else the release build, else the debug build of this checkout."""
    if os.environ.get("STEPBENCH_BIN"):
        path = os.environ["STEPBENCH_BIN"]
        if not os.access(path, os.X_OK):
            raise ToolError(f"{path}: no stepbench binary there; build one (`swift build -c release --package-path Benchmarks "
                            f"--product stepbench`) and name it with --stepbench or STEPBENCH_BIN")
        return path
    for configuration in ("release", "debug"):
        path = os.path.join(ROOT, "Benchmarks", ".build", configuration, "stepbench")
        if os.path.exists(path):
            return path
    raise ToolError("no stepbench binary: build it with `swift build -c release --package-path Benchmarks --product stepbench` "
                    "(scripts/bench does) or set STEPBENCH_BIN")


def ask(*arguments):
    """Runs `stepbench ARGUMENTS…` and returns its JSON output. Raises ToolError with the tool's message."""
    out = text(*arguments)
    try:
        return json.loads(out)
    except ValueError as e:
        raise ToolError(f"`stepbench {' '.join(arguments)}` wrote no JSON ({e}); is {binary()} a stepbench binary?")


# What these scripts read from the catalog; a tool without them is older than the scripts.
CATALOG_KEYS = ("perElementScenario", "crossThreadScenario", "contendedScenarios",
                "referenceDesign", "scenarios", "designs")


def catalog():
    """The tool's catalog (`stepbench list --format json`). Raises ToolError naming what to do
    when the tool is older than these scripts."""
    return checked_catalog(ask("list", "--format", "json"))


def checked_catalog(data):
    """`data`, the tool's catalog, when it has what these scripts read. Raises ToolError naming
    what to do when the tool is older than these scripts."""
    missing = [k for k in CATALOG_KEYS if k not in data]
    if missing:
        raise ToolError(f"{binary()} is older than these scripts (its catalog has no {', '.join(missing)}): "
                        f"build this checkout's (`swift build -c release --package-path Benchmarks --product stepbench`)")
    return data


def text(*arguments, statuses=(0,)):
    """Runs `stepbench ARGUMENTS…` and returns its standard output; an exit status outside
    `statuses` raises ToolError with the tool's message."""
    path = binary()
    try:
        done = subprocess.run([path, *arguments], capture_output=True, text=True, timeout=600)
    except OSError as e:
        raise ToolError(f"{path}: cannot run ({e.strerror}); set STEPBENCH_BIN to a stepbench binary")
    except subprocess.TimeoutExpired:
        raise ToolError(f"`stepbench {' '.join(arguments)}` did not answer in 10 minutes")
    if done.returncode not in statuses:
        message = done.stderr.strip().removeprefix("Error: ")
        if done.returncode == 64:  # a usage error: the scripts asked for something the binary does not have
            message += (f"\n({path} does not take `stepbench {' '.join(arguments[:1])}` as these scripts ask it: is it "
                        f"older than them? build this checkout's: `swift build -c release --package-path Benchmarks --product stepbench`)")
        raise ToolError(message or f"`stepbench {' '.join(arguments)}` exited {done.returncode}")
    return done.stdout


@contextlib.contextmanager
def using(path):
    """Asks the binary at `path` (None: the default) inside the block."""
    previous = os.environ.get("STEPBENCH_BIN")
    if path:
        os.environ["STEPBENCH_BIN"] = path
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("STEPBENCH_BIN", None)
        else:
            os.environ["STEPBENCH_BIN"] = previous
