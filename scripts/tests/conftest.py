"""The marker scripts/test's pytest step needs: `alone` tests assert a timing verdict of real
runs, so they run after the others, one at a time (on two workers, the other worker's processes
take the cores they measure: the outside timing gate's A/A runs then drift by more than its
planted 3× slowdown)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "alone: asserts a timing verdict of real runs; run with no other test beside it")
