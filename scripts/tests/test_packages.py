"""The three manifests. The root Package.swift is the library a user adds: `Stepping` on
OpenCombine, by version range, and nothing else. Bench/Package.swift is the suite, on the root by
path, pinning every package exactly (its numbers depend on the versions).
Bench/Tests/ThreadSanitizer/Package.swift builds the library and its tests apart from the
measuring targets (a second manifest, so that no switch steers the bench's): it must pin every
package exactly as the bench does, and its targets must be the repository's, by the same paths."""
import os
import re
import shutil
import subprocess
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "Bench")
TSAN = os.path.join(BENCH, "Tests", "ThreadSanitizer")


def pins(path):
    text = open(path).read()
    return dict(re.findall(r'\.package\(url: "([^"]+)", exact: "([^"]+)"', text))


def test_the_thread_sanitizer_package_pins_what_the_bench_pins():
    bench, tsan = pins(os.path.join(BENCH, "Package.swift")), pins(os.path.join(TSAN, "Package.swift"))
    assert tsan and all(bench.get(url) == version for url, version in tsan.items()), (tsan, bench)


def test_its_sources_are_the_repositorys():
    for folder in ("Sources", "Tests"):
        for name in os.listdir(os.path.join(TSAN, folder)):
            link = os.path.join(TSAN, folder, name)
            assert os.path.islink(link), f"{link}: a symbolic link into the repository, not a copy"
            target = os.path.realpath(link)
            assert target.startswith(ROOT + os.sep) and os.path.isdir(target), (link, target)


def test_the_library_manifest_depends_on_opencombine_alone_by_range():
    text = open(os.path.join(ROOT, "Package.swift")).read()
    packages = re.findall(r'\.package\(([^)]*)\)', text)
    assert packages == ['url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"'], packages


@pytest.mark.skipif(shutil.which("swift") is None, reason="needs swift (scripts/test puts it on PATH)")
def test_a_package_using_the_library_resolves_opencombine_and_nothing_else():
    with tempfile.TemporaryDirectory() as folder:
        os.makedirs(os.path.join(folder, "Sources", "User"))
        open(os.path.join(folder, "Sources", "User", "User.swift"), "w").write("import Stepping\n")
        open(os.path.join(folder, "Package.swift"), "w").write(
            "// swift-tools-version: 6.1\nimport PackageDescription\n"
            "let package = Package(name: \"User\", dependencies: [.package(path: \"%s\")],\n"
            "    targets: [.target(name: \"User\", dependencies: [.product(name: \"Stepping\", package: \"%s\")])])\n"
            % (ROOT, os.path.basename(ROOT)))
        done = subprocess.run(["swift", "package", "show-dependencies", "--format", "json"], cwd=folder,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        remote = [u for u in re.findall(r'"url"\s*:\s*"([^"]+)"', done.stdout) if "://" in u]
        assert remote == ["https://github.com/OpenCombine/OpenCombine"], done.stdout
