"""Tests/ThreadSanitizer/Package.swift builds the library and its tests apart from the measuring
targets (a second manifest, so that no switch steers the root one): it must pin every package
exactly as the root manifest does, and its targets must be the root's, by the same paths."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TSAN = os.path.join(ROOT, "Tests", "ThreadSanitizer")


def pins(path):
    text = open(path).read()
    return dict(re.findall(r'\.package\(url: "([^"]+)", exact: "([^"]+)"', text))


def test_the_thread_sanitizer_package_pins_what_the_root_pins():
    root, tsan = pins(os.path.join(ROOT, "Package.swift")), pins(os.path.join(TSAN, "Package.swift"))
    assert tsan and all(root.get(url) == version for url, version in tsan.items()), (tsan, root)


def test_its_sources_are_the_roots():
    for folder in ("Sources", "Tests"):
        for name in os.listdir(os.path.join(TSAN, folder)):
            link = os.path.join(TSAN, folder, name)
            assert os.path.islink(link), f"{link}: a symbolic link into the root package, not a copy"
            target = os.path.realpath(link)
            assert target.startswith(ROOT + os.sep) and os.path.isdir(target), (link, target)
