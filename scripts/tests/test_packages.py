"""The manifests. The root Package.swift is what a user adds: the library `Stepping` on OpenCombine
by version range and nothing else, and the conformance kit on the library, OpenCombine and the
toolchain only (no C target, no allocator, no valgrind: `swift test --sanitize=thread` runs at
the root). Benchmarks/Package.swift is the bench, on the root by path, pinning every package
exactly (its numbers depend on the versions), as Benchmarks/Peers/Package.swift does."""
import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "Benchmarks")
needs_swift = pytest.mark.skipif(shutil.which("swift") is None, reason="needs swift (scripts/test puts it on PATH)")


def packages(path):
    return re.findall(r'\.package\(([^)]*)\)', open(path).read())


def test_the_root_manifest_depends_on_opencombine_alone_by_range():
    assert packages(os.path.join(ROOT, "Package.swift")) == [
        'url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"']


def test_the_bench_and_the_peers_pin_every_remote_package_exactly():
    for manifest in (os.path.join(BENCH, "Package.swift"), os.path.join(BENCH, "Peers", "Package.swift")):
        remote = [p for p in packages(manifest) if "url:" in p]
        assert remote and all(re.search(r'exact: "[0-9.]+"', p) for p in remote), (manifest, remote)


@needs_swift
def test_the_root_packages_targets_are_swift_only():
    done = subprocess.run(["swift", "package", "describe", "--type", "json"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    targets = {t["name"]: t["module_type"] for t in json.loads(done.stdout)["targets"]}
    assert {"Stepping", "SteppingConformance", "SteppingConformanceTesting"} <= set(targets), targets
    assert set(targets.values()) == {"SwiftTarget"}, targets


@needs_swift
def test_a_package_using_the_library_and_the_kit_resolves_opencombine_and_nothing_else():
    """As the README writes it: the repository's root package (by path here, by URL for a user),
    its products Stepping, SteppingConformance and SteppingConformanceTesting."""
    with tempfile.TemporaryDirectory() as folder:
        os.makedirs(os.path.join(folder, "Sources", "User"))
        open(os.path.join(folder, "Sources", "User", "User.swift"), "w").write(
            "import Stepping\nimport SteppingConformance\nimport SteppingConformanceTesting\n")
        products = ", ".join(f'.product(name: "{name}", package: "{os.path.basename(ROOT)}")'
                             for name in ("Stepping", "SteppingConformance", "SteppingConformanceTesting"))
        open(os.path.join(folder, "Package.swift"), "w").write(
            "// swift-tools-version: 6.1\nimport PackageDescription\n"
            f"let package = Package(name: \"User\", dependencies: [.package(path: \"{ROOT}\")],\n"
            f"    targets: [.target(name: \"User\", dependencies: [{products}])])\n")
        done = subprocess.run(["swift", "package", "show-dependencies", "--format", "json"], cwd=folder,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        remote = [u for u in re.findall(r'"url"\s*:\s*"([^"]+)"', done.stdout) if "://" in u]
        assert remote == ["https://github.com/OpenCombine/OpenCombine"], done.stdout
