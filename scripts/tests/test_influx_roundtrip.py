"""A real InfluxDB round trip of `stepbench show export --format influx`.

Starts Debian's `influxd` (InfluxDB 1.6.7; scripts/test installs the `influxdb` package) on
127.0.0.1 with its own temporary config, folders and free ports, writes the fixture's export
through the HTTP /write API, reads it back through /query and checks every measurement, tag,
field, field type and timestamp against the fixture JSON itself (never against the exporter's
text). A second test runs docs/METHOD.md's fleet query (one row's history per machine kind).

influxd missing is a failure: CI must run this test. STEPBENCH_ALLOW_MISSING_INFLUXD=1 turns it
into a skip, for machines where the package cannot be installed.
"""
import calendar
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from scripts.tests.test_export import FIXTURE, ROOT, expected, stepbench

START_TIMEOUT = 30.0  # seconds for /ping to answer; a cold start here takes well under one
ATTEMPTS = 3          # fresh ports per attempt: a port found free can be taken before influxd binds it

# docs/METHOD.md's fleet query (section "A fleet of machine kinds"); test_readme_fleet_query_works runs it.
FLEET_QUERY = ('SELECT mean("ns_per_element") FROM "stepbench" '
               "WHERE \"scenario\" = 'sync-step' AND \"design\" = 'atomic' AND \"threads\" = '1' "
               'AND $timeFilter GROUP BY time(1d), "machine" fill(none)')


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None):
    """(status, body text) of one request; HTTP error statuses are returned, not raised."""
    request = urllib.request.Request(url, data=body, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Influx:
    def __init__(self, url, log):
        self.url, self.log = url, log

    def query(self, q, db=None, method="GET"):
        params = {"q": q, "epoch": "ns"}
        if db:
            params["db"] = db
        status, text = http(method, f"{self.url}/query?{urllib.parse.urlencode(params)}")
        assert status == 200, f"{q}: HTTP {status}: {text}"
        results = json.loads(text)["results"]
        # InfluxQL reports a failed statement inside a 200 answer
        assert all("error" not in r for r in results), f"{q}: {results}"
        return results

    def create_database(self, name):
        self.query(f'CREATE DATABASE "{name}"', method="POST")  # 1.x refuses CREATE over GET

    def write(self, db, lines):
        status, text = http("POST", f"{self.url}/write?db={db}&precision=ns", lines.encode())
        # 204: every point was accepted (a partial write answers 400 with the rejected lines)
        assert status == 204, f"InfluxDB rejected the export: HTTP {status}: {text}"


def write_config(folder, rpc_port, http_port):
    path = os.path.join(folder, "influxdb.conf")
    with open(path, "w") as f:
        f.write(f"""# written by scripts/tests/test_influx_roundtrip.py
# Debian's build reads reporting-enabled (default false), upstream reads reporting-disabled.
reporting-enabled = false
reporting-disabled = true
bind-address = "127.0.0.1:{rpc_port}"
[meta]
  dir = "{folder}/meta"
[data]
  dir = "{folder}/data"
  wal-dir = "{folder}/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[http]
  bind-address = "127.0.0.1:{http_port}"
  log-enabled = false
""")
    return path


def start(influxd, folder):
    """Starts influxd; returns (process, url, log path) once /ping answers 204, or fails with its log."""
    # INFLUXDB_* variables override the config file; the server must be exactly the one configured here.
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFLUXDB_")}
    for attempt in range(1, ATTEMPTS + 1):
        rpc_port, http_port = free_port(), free_port()
        config = write_config(folder, rpc_port, http_port)
        log = os.path.join(folder, f"influxd-{attempt}.log")
        with open(log, "w") as out:
            process = subprocess.Popen([influxd, "run", "-config", config], stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, env=env)
        url = f"http://127.0.0.1:{http_port}"
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if http("GET", f"{url}/ping")[0] == 204:
                    return process, url, log
            except OSError:  # not listening yet
                pass
            time.sleep(0.05)
        exited = process.poll()
        stop(process)
        text = open(log).read()
        if "address already in use" in text and attempt < ATTEMPTS:
            continue
        why = (f"exited with status {exited} before answering /ping on {url}" if exited is not None
               else f"did not answer /ping on {url} within {START_TIMEOUT:.0f} s")
        pytest.fail(f"influxd {why} (attempt {attempt} of {ATTEMPTS}); its log ({log}):\n{text}")


def stop(process):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def influx(tmp_path_factory):
    influxd = shutil.which("influxd")
    if influxd is None:
        if os.environ.get("STEPBENCH_ALLOW_MISSING_INFLUXD") == "1":
            pytest.skip("influxd not installed (STEPBENCH_ALLOW_MISSING_INFLUXD=1)")
        pytest.fail("influxd not found: install Debian's `influxdb` package (scripts/test does), "
                    "or set STEPBENCH_ALLOW_MISSING_INFLUXD=1 to skip this test locally")
    folder = str(tmp_path_factory.mktemp("influxdb"))
    process, url, log = start(influxd, folder)
    try:
        yield Influx(url, log)
    finally:
        stop(process)


def export(path):
    done = subprocess.run([stepbench(), "show", "export", "--format", "influx", path], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def epoch_ns(created_at):
    """The run's start, as the fixture states it (ISO 8601 UTC, whole seconds), in ns since 1970."""
    return calendar.timegm(time.strptime(created_at, "%Y-%m-%dT%H:%M:%SZ")) * 1_000_000_000


def machine_id(path):
    """The fixture's machine kind, as the tool names it (`stepbench show machine FILE`)."""
    done = subprocess.run([stepbench(), "show", "machine", path], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_every_point_reads_back_as_the_fixture_says(influx):
    data = json.load(open(FIXTURE))
    influx.create_database("roundtrip")
    influx.write("roundtrip", export(FIXTURE))

    [measurements] = influx.query("SHOW MEASUREMENTS", db="roundtrip")
    assert measurements["series"][0]["values"] == [["stepbench"]]
    # Every field is a float: an integer-typed field on one machine would make InfluxDB reject
    # the float values of the same field from every other machine.
    [keys] = influx.query("SHOW FIELD KEYS", db="roundtrip")
    want = expected()
    assert sorted(keys["series"][0]["values"]) == sorted([name, "float"] for name in {k[3] for k in want})

    [result] = influx.query('SELECT * FROM "stepbench" GROUP BY *', db="roundtrip")
    got = {}
    kind = machine_id(FIXTURE)
    for series in result["series"]:
        assert series["name"] == "stepbench"
        tags = series["tags"]
        assert set(tags) == {"machine", "scenario", "design", "threads"}
        assert tags["machine"] == kind == "amd-epyc-2c"
        assert len(series["values"]) == 1, f"one point per row, got {series['values']}"
        point = dict(zip(series["columns"], series["values"][0]))
        assert point.pop("time") == epoch_ns(data["createdAt"])
        for name, value in point.items():
            if value is not None:  # a column another series has and this one does not
                got[(tags["scenario"], tags["design"], tags["threads"], name)] = value
    assert got.keys() == want.keys()
    # Exact: float64 all the way, and Swift, InfluxDB (Go) and Python all print and parse the
    # shortest text that round-trips.
    assert got == {k: v["median"] for k, v in want.items()}


def variant(tmp_path, name, created_at, cpu_model=None, cores=None, ns_per_element=None):
    """A copy of the fixture from another run and, optionally, another machine kind."""
    data = json.load(open(FIXTURE))
    data["createdAt"] = created_at
    data["machine"]["cpuModel"] = cpu_model or data["machine"]["cpuModel"]
    data["machine"]["cores"] = cores or data["machine"]["cores"]
    for row in data["rows"]:
        if (row["scenario"], row["design"], row["threads"]) == ("sync-step", "atomic", 1) and ns_per_element:
            row["summary"]["nsPerElement"]["median"] = ns_per_element
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path), machine_id(str(path))


def test_readme_fleet_query_works(influx, tmp_path):
    readme = open(os.path.join(ROOT, "docs", "METHOD.md")).read()
    assert FLEET_QUERY in readme, "docs/METHOD.md's fleet query and this test's have drifted apart"
    amd_day1 = json.load(open(FIXTURE))
    amd_day2, amd = variant(tmp_path, "amd2.json", "2026-11-23T09:00:00Z", ns_per_element=200.5)
    intel, other = variant(tmp_path, "intel.json", "2026-11-22T23:59:59Z",
                           cpu_model="Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", cores=4, ns_per_element=180.25)
    influx.create_database("fleet")
    for path in (FIXTURE, amd_day2, intel):
        influx.write("fleet", export(path))

    q = FLEET_QUERY.replace("$timeFilter", "time >= '2026-11-22T00:00:00Z' AND time < '2026-11-24T00:00:00Z'")
    [result] = influx.query(q, db="fleet")
    history = {s["tags"]["machine"]: s["values"] for s in result["series"]}
    day = 86_400 * 1_000_000_000
    day1 = epoch_ns("2026-11-22T00:00:00Z")
    atomic = next(r for r in amd_day1["rows"] if (r["scenario"], r["design"], r["threads"]) == ("sync-step", "atomic", 1))
    assert other == "intel-r-xeon-r-platinum-8375c-cpu-2-90ghz-4c"
    assert history == {amd: [[day1, atomic["summary"]["nsPerElement"]["median"]], [day1 + day, 200.5]],
                       other: [[day1, 180.25]]}
