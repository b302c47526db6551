"""Tests of bench/alltoall/a2a-bench.c and scripts/alltoall-ab: the
benchmark over shared memory, the configuration rewrite, dry runs, an
end-to-end A/B run against ibsim fabrics (fake restart, osm-sim behind
--dump-cmd), restoration after failures and signals, and --predict."""

import csv
import io
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import (PYTHON, REPO, TOPO_DIR, plugin_dir, requires_plugin,
                      run_script)
from osmoffset.alltoall import Interrupted, StepError, UsageError
from osmoffset.alltoall import bench as a2a_bench
from osmoffset.alltoall import matrix, smconf
from osmoffset.cli import alltoall_ab

A2A_AB = os.path.join(REPO, "scripts", "alltoall-ab")
OSM_SIM = os.path.join(REPO, "scripts", "osm-sim")
HEADER = ["pattern", "ranks", "bytes", "iterations", "min_us", "median_us",
          "mean_us", "max_us", "bw_MBps"]

requires_mpi = pytest.mark.skipif(
    not (shutil.which("mpicc") and shutil.which("mpirun")),
    reason="mpicc/mpirun missing (install openmpi-bin libopenmpi-dev)")

# Open MPI on one machine: shared memory only, more ranks than cores, root.
MPI_ARGS = "--oversubscribe --mca btl self,vader"
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1",
           "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl": "self,vader",
           # more ranks than cores: yield instead of busy polling
           "OMPI_MCA_mpi_yield_when_idle": "1"}

# A configuration file shaped like `opensm -c` output, with traps: a
# commented-out lmc line, an indented key, other plugin options, a last
# line without newline.
CONF = (
    "# OpenSM configuration\n"
    "#\n"
    "# The LMC value used on this subnet\n"
    "lmc 0\n"
    "# lmc 5 (a comment, must stay)\n"
    "lmc_esp0 FALSE\n"
    "\n"
    "routing_engine (null)\n"
    "root_guid_file (null)\n"
    "  event_plugin_name other_plugin\n"
    "event_plugin_options foo=1 port_offsetting=plain\n"
    "sm_priority 15")

CONF_LMC2_ON = (
    "# OpenSM configuration\n"
    "#\n"
    "# The LMC value used on this subnet\n"
    "lmc 2\n"
    "# lmc 5 (a comment, must stay)\n"
    "lmc_esp0 FALSE\n"
    "\n"
    "routing_engine minhop\n"
    "root_guid_file (null)\n"
    "  event_plugin_name other_plugin osmoffset\n"
    "event_plugin_options foo=1 port_offsetting=on\n"
    "sm_priority 15")


def run_ab(args, timeout=120, env=None):
    return run_script(A2A_AB, args, dict(MPI_ENV, **(env or {})), timeout)


def parse_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == HEADER
    return [dict(zip(HEADER, r)) for r in rows[1:]]


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("a2a-build"))


@pytest.fixture(scope="module")
def bench(build_dir):
    """The benchmark binary alltoall-ab finds: $OSMOFFSET_A2A_BENCH (make
    check sets it), the source tree's build, an installed one; else built
    by alltoall-ab --local-ranks."""
    if not (shutil.which("mpicc") and shutil.which("mpirun")):
        pytest.skip("mpicc/mpirun missing")
    found = a2a_bench.find_bench()
    if found:
        return found
    p = run_ab(["--local-ranks", "2", "--sizes", "8", "--iters", "1",
                "--build-dir", build_dir])
    assert p.returncode == 0, p.stderr
    path = os.path.join(build_dir, "a2a-bench")
    assert os.access(path, os.X_OK)
    return path


# ----------------------------------------------------------------------
# The benchmark
# ----------------------------------------------------------------------

def check_rows(rows, sizes, ranks, iters, pattern):
    assert [int(r["bytes"]) for r in rows] == sizes
    for r in rows:
        assert r["pattern"] == pattern
        assert int(r["ranks"]) == ranks
        assert int(r["iterations"]) == iters
        mn, md, mean, mx = (float(r[k]) for k in
                            ("min_us", "median_us", "mean_us", "max_us"))
        assert 0 < mn <= md <= mx
        assert mn <= mean <= mx
        bw = float(r["bw_MBps"])
        want = int(r["bytes"]) * (ranks - 1) / md
        assert abs(bw - want) <= 0.002 + want * 2e-4


@requires_mpi
def test_local_four_ranks_csv(bench, build_dir, tmp_path):
    out = tmp_path / "local.csv"
    p = run_ab(["--local-ranks", "4", "--sizes", "8,64,1K,64K,1M",
                "--iters", "7", "--warmup", "1", "--bench", bench,
                "--csv", str(out)])
    assert p.returncode == 0, p.stderr
    rows = parse_csv(p.stdout)
    check_rows(rows, [8, 64, 1024, 65536, 1 << 20], 4, 7, "alltoall")
    assert out.read_text() == p.stdout


@requires_mpi
def test_bench_default_sizes_shift_pattern(bench, tmp_path):
    out = tmp_path / "shift.csv"
    p = subprocess.run(
        ["mpirun", "-np", "4"] + MPI_ARGS.split() +
        [bench, "--pattern", "shift", "--iters", "3", "--warmup", "0",
         "--csv", str(out)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, universal_newlines=True,
        env=dict(os.environ, **MPI_ENV), timeout=60)
    assert p.returncode == 0, p.stderr
    rows = parse_csv(out.read_text())
    check_rows(rows, [1 << i for i in range(3, 21)], 4, 3, "shift")
    # the text table on stdout: two comment lines and one line per size
    lines = p.stdout.splitlines()
    assert lines[0].startswith("# a2a-bench: pattern shift, 4 ranks")
    assert [int(ln.split()[0]) for ln in lines[2:]] == \
        [1 << i for i in range(3, 21)]


@requires_mpi
@pytest.mark.parametrize("bad,msg", [
    (["--sizes", "8,0"], "--sizes: '0' is not a size"),
    (["--sizes", "8,x"], "--sizes: 'x' is not a size"),
    (["--sizes", "128M"], "--sizes: '128M' is not a size"),
    (["--iters", "0"], "--iters: '0' is not a whole number >= 1"),
    (["--warmup", "-1"], "--warmup: '-1' is not a whole number >= 0"),
    (["--pattern", "ring"], "--pattern: 'ring' is not alltoall or shift"),
    (["--csv", "/nonexistent-dir/x.csv"], "--csv /nonexistent-dir/x.csv"),
    (["--frobnicate"], "unknown option '--frobnicate'"),
    (["--iters"], "option --iters needs a value"),
    (["--sizes", "8"], "needs at least 2 ranks, got 1"),
])
def test_bench_bad_arguments(bench, bad, msg):
    # a singleton MPI process (no mpirun): the arguments are checked
    # before anything else
    p = subprocess.run([bench] + bad, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True,
                       env=dict(os.environ, **MPI_ENV), timeout=60)
    assert p.returncode == 2
    assert len(p.stderr.splitlines()) == 1
    assert p.stderr.startswith("a2a-bench: " + msg)
    assert p.stdout == ""


@requires_mpi
def test_bench_bad_argument_all_ranks_exit_2(bench):
    p = subprocess.run(["mpirun", "-np", "3"] + MPI_ARGS.split() +
                       [bench, "--sizes", "8,0"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True,
                       env=dict(os.environ, **MPI_ENV), timeout=60)
    assert p.returncode == 2
    # only rank 0 speaks
    assert p.stderr.count("a2a-bench: --sizes: '0' is not a size from 1 "
                          "byte to 64M\n") == 1
    assert "Segmentation" not in p.stderr


# ----------------------------------------------------------------------
# The configuration rewrite
# ----------------------------------------------------------------------

def test_rewrite_conf_exact():
    assert smconf.rewrite_conf(CONF, 2, "minhop", "on") == CONF_LMC2_ON
    # idempotent, and back to the same keys
    assert smconf.rewrite_conf(CONF_LMC2_ON, 2, "minhop", "on") == \
        CONF_LMC2_ON


def test_rewrite_conf_appends_missing_keys_crlf():
    text = "sm_priority 1\r\n# lmc 3\r\n"
    assert smconf.rewrite_conf(text, 1, "updn", "off") == (
        "sm_priority 1\r\n# lmc 3\r\n# added by alltoall-ab\r\n"
        "lmc 1\r\nrouting_engine updn\r\nevent_plugin_name osmoffset\r\n"
        "event_plugin_options port_offsetting=off\r\n")


def test_matrix_order_and_baseline():
    args = alltoall_ab.build_parser().parse_args(
        ["--engines", "updn,minhop", "--lmc", "2,1", "--offsetting", "on"])
    configs, added = matrix.args_matrix(args)
    assert [c["name"] for c in configs] == [
        "updn-lmc0-off", "updn-lmc0-on", "updn-lmc1-off", "updn-lmc1-on",
        "updn-lmc2-off", "updn-lmc2-on", "minhop-lmc0-off", "minhop-lmc0-on",
        "minhop-lmc1-off", "minhop-lmc1-on", "minhop-lmc2-off",
        "minhop-lmc2-on"]
    assert added == ["LMC 0", "port_offsetting off"]


# ----------------------------------------------------------------------
# A/B runs
# ----------------------------------------------------------------------

@pytest.fixture
def site(tmp_path):
    """A configuration file, an mpirun hostfile and a fake SM: the
    restart command logs the configuration it sees (and fails when told
    to), the dump command routes a curated ibsim fabric with osm-sim using
    the lmc / routing_engine / port_offsetting of that file."""
    conf = tmp_path / "opensm.conf"
    conf.write_text(CONF)
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost slots=%d\n" % min(4, os.cpu_count() or 1))
    log = tmp_path / "sm.log"
    fakesm = tmp_path / "fakesm"
    fakesm.write_text(r"""#!/bin/sh
# fakesm restart|dump CONF
conf=$2
lmc=$(awk '$1=="lmc"{v=$2} END{print v}' "$conf")
eng=$(awk '$1=="routing_engine"{v=$2} END{print v}' "$conf")
off=$(sed -n 's/^event_plugin_options.*port_offsetting=\([a-z]*\).*/\1/p' \
      "$conf" | tail -n 1)
case $1 in
restart)
    echo "restart $eng $lmc $off" >> %(log)s
    [ -n "$FAIL_AT_LMC" ] && [ "$lmc" = "$FAIL_AT_LMC" ] && \
        { echo "sm refused lmc $lmc" >&2; exit 1; }
    exit 0 ;;
dump)
    grep -q '^ *event_plugin_name.* osmoffset$' "$conf" || exit 3
    %(python)s %(osm_sim)s --net %(net)s --out "$A2A_AB_DIR/sim" \
        --lmc "$lmc" --engine "$eng" --port-offsetting "$off" \
        --plugin-dir %(plugin)s --quiet >&2 || exit 4
    cat "$A2A_AB_DIR/sim/opensm-lfts.dump" ;;
esac
""" % {"log": log, "python": PYTHON, "osm_sim": OSM_SIM,
       "net": os.path.join(TOPO_DIR, "ft2-trunk-4x2x2.net"),
       "plugin": plugin_dir() or "/nonexistent"})
    fakesm.chmod(0o755)

    class Site:
        pass
    s = Site()
    s.tmp, s.conf, s.hosts, s.log, s.fakesm = tmp_path, conf, hosts, log, \
        fakesm
    s.backup = str(conf) + ".alltoall-ab.bak"
    s.args = [
        "--opensm-conf", str(conf), "--launcher", "mpirun",
        "--hostfile", str(hosts), "--np", "4", "--launcher-args", MPI_ARGS,
        "--restart-cmd", "%s restart %s" % (fakesm, conf),
        "--wait-cmd", "true", "--settle", "0", "--wait-timeout", "20",
        "--dump-cmd", "%s dump %s" % (fakesm, conf),
        "--topo-cmd", 'cat "$A2A_AB_DIR/sim/opensm-subnet.lst"',
        "--sizes", "8,4K", "--iters", "5", "--warmup", "1"]
    return s


def test_dry_run_changes_nothing(site, tmp_path):
    before = os.stat(site.conf)
    marker = tmp_path / "restarted"
    args = [a if not a.startswith(str(site.fakesm) + " restart") else
            "touch %s" % marker for a in site.args]
    out = tmp_path / "out"
    p = run_ab(args + ["--dry-run", "--engines", "updn", "--lmc", "0,2",
                       "--out", str(out), "--build-dir",
                       str(tmp_path / "b")])
    assert p.returncode == 0, p.stderr
    assert site.conf.read_text() == CONF
    assert os.stat(site.conf).st_mtime_ns == before.st_mtime_ns
    for path in (marker, out, tmp_path / "b", site.backup):
        assert not os.path.exists(str(path))
    assert not site.log.exists()
    o = p.stdout
    assert "4 configurations: updn-lmc0-off, updn-lmc0-on, updn-lmc2-off, " \
        "updn-lmc2-on" in o
    assert "would copy %s to %s (backup)" % (site.conf, site.backup) in o
    assert "  line 4: 'lmc 0' -> 'lmc 2'" in o
    assert "  line 11: 'event_plugin_options foo=1 port_offsetting=plain'" \
        " -> 'event_plugin_options foo=1 port_offsetting=on'" in o
    assert o.count("would run: touch %s" % marker) == 5   # 4 + final
    assert o.count("would run: mpirun --hostfile %s -np 4 --oversubscribe"
                   % site.hosts) == 4
    assert "would restore %s" % site.conf in o
    assert o.rstrip().endswith("dry run: nothing was changed")


@requires_mpi
@requires_plugin
def test_ab_end_to_end(site, build_dir, bench):
    out = site.tmp / "out"
    p = run_ab(site.args + ["--engines", "updn", "--lmc", "0,1,2",
                            "--out", str(out), "--bench", bench])
    assert p.returncode == 0, p.stdout + p.stderr
    assert site.conf.read_bytes() == CONF.encode()
    assert not os.path.exists(site.backup)
    assert "backup of %s: %s" % (site.conf, site.backup) in p.stdout
    assert "restored %s (byte-identical; backup removed)" % site.conf \
        in p.stdout
    # every configuration reached the SM, then the original file did
    assert site.log.read_text().splitlines() == [
        "restart updn 0 off", "restart updn 0 on", "restart updn 1 off",
        "restart updn 1 on", "restart updn 2 off", "restart updn 2 on",
        "restart (null) 0 plain"]
    names = ["updn-lmc%d-%s" % (l, o) for l in (0, 1, 2)
             for o in ("off", "on")]
    for n, name in enumerate(names):
        d = out / name
        lmc = n // 2
        assert "lmc %d\n" % lmc in (d / "opensm.conf").read_text()
        res = json.loads((d / "analyze.json").read_text())
        assert res["lmc"] == lmc and res["valid"] and not res["credit_loop"]
        assert res["hosts"] == 16
        check_rows(parse_csv((d / "bench-1.csv").read_text()), [8, 4096],
                   4, 5, "alltoall")
    with open(str(out / "results.csv")) as f:
        rows = list(csv.DictReader(f))
    assert [(r["engine"], r["lmc"], r["port_offsetting"], r["bytes"])
            for r in rows] == [("updn", str(n // 2), ("off", "on")[n % 2], s)
                               for n in range(6) for s in ("8", "4096")]
    assert [r["slower_than_lmc0_pct"] for r in rows[:2]] == ["0.0", "0.0"]
    for r in rows:
        t = float(r["median_us"])
        base = float(rows[0 if r["bytes"] == "8" else 1]["median_us"])
        assert float(r["slower_than_lmc0_pct"]) == \
            pytest.approx((t / base - 1) * 100, abs=0.006)
    with open(str(out / "slowdown.csv")) as f:
        table = list(csv.reader(f))
    assert table[0] == ["bytes"] + names[1:]
    assert [r[0] for r in table[1:]] == ["8", "4096"]
    for png in ("slowdown-updn.png", "time-updn.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] and summary["restored"]
    assert set(summary["checks"]) == set(names)


@requires_mpi
@requires_plugin
def test_failure_midway_restores(site, bench):
    out = site.tmp / "out"
    p = run_ab(site.args + ["--engines", "updn", "--lmc", "0,1,2",
                            "--out", str(out), "--bench", bench],
               env={"FAIL_AT_LMC": "1"})
    assert p.returncode == 1
    assert "restart SM failed (exit status 1)" in p.stderr
    assert "sm refused lmc 1" in p.stderr
    assert site.conf.read_bytes() == CONF.encode()
    assert not os.path.exists(site.backup)
    assert site.log.read_text().splitlines() == [
        "restart updn 0 off", "restart updn 0 on", "restart updn 1 off",
        "restart (null) 0 plain"]
    # what was measured before the failure is kept
    with open(str(out / "results.csv")) as f:
        rows = list(csv.DictReader(f))
    assert {r["port_offsetting"] for r in rows} == {"off", "on"}
    assert {r["lmc"] for r in rows} == {"0"}
    assert json.loads((out / "summary.json").read_text())["complete"] \
        is False


def test_sigterm_restores(site):
    # the subnet never comes up: the wait command sleeps; SIGTERM then
    args = list(site.args)
    args[args.index("--wait-cmd") + 1] = "sleep 60; exit 1"
    args[args.index("--wait-timeout") + 1] = "120"
    out = site.tmp / "out"
    e = dict(os.environ, **MPI_ENV)
    proc = subprocess.Popen(
        [PYTHON, A2A_AB] + args + ["--out", str(out), "--no-check",
                                   "--bench", "/bin/true"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, universal_newlines=True, env=e)
    try:
        deadline = time.monotonic() + 30
        while site.conf.read_text() == CONF:
            assert time.monotonic() < deadline, "the file never changed"
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        assert os.path.exists(site.backup)
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM
    assert "interrupted by signal %d" % signal.SIGTERM in stderr
    assert site.conf.read_bytes() == CONF.encode()
    assert not os.path.exists(site.backup)
    assert site.log.read_text().splitlines() == [
        "restart updn 0 off", "restart (null) 0 plain"]


def test_stale_backup_refuses(site):
    with open(site.backup, "w") as f:
        f.write("lmc 2\n")
    p = run_ab(site.args + ["--out", str(site.tmp / "out"),
                            "--bench", "/bin/true"])
    assert p.returncode == 2
    assert "backup %s from an earlier run exists and differs" % site.backup \
        in p.stderr
    assert site.conf.read_text() == CONF
    assert open(site.backup).read() == "lmc 2\n"
    assert not site.log.exists()


@pytest.mark.parametrize("extra,msg", [
    (["--lmc", "0,9"], "--lmc: '9' is not a whole number from 0 to 7"),
    (["--offsetting", "maybe"], "--offsetting: bad value 'maybe'"),
    (["--sizes", "8,zz"], "--sizes: 'zz' is not a size"),
    (["--opensm-conf", "/nonexistent/opensm.conf"],
     "--opensm-conf /nonexistent/opensm.conf: no such file"),
    (["--hostfile", "/nonexistent/hosts"],
     "--hostfile /nonexistent/hosts: no such file"),
])
def test_bad_usage(site, extra, msg):
    p = run_ab(site.args + extra + ["--dry-run"])
    assert p.returncode == 2
    assert p.stderr.startswith("alltoall-ab: " + msg)
    assert len(p.stderr.splitlines()) == 1
    assert "Traceback" not in p.stderr
    assert site.conf.read_text() == CONF


# ----------------------------------------------------------------------
# --predict
# ----------------------------------------------------------------------

@requires_plugin
def test_predict_kary_offsetting_helps():
    p = run_ab(["--predict", "--net", os.path.join(TOPO_DIR, "kary-4-3.net"),
                "--lmc", "0,1,2", "--json"], timeout=120)
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["slowdown_unit"] == "percent"
    rows = {(r["engine"], r["lmc"], r["port_offsetting"]): r
            for r in res["rows"]}
    assert sorted(rows) == [("updn", l, o) for l in (0, 1, 2)
                            for o in ("off", "on")]
    base = rows[("updn", 0, "off")]
    assert base["predicted_slowdown_base"] == 0.0
    assert base["predicted_slowdown_spread"] == 0.0
    assert base["spread_efficiency"] == base["base_efficiency"]
    for r in res["rows"]:
        assert set(r) == {"engine", "lmc", "port_offsetting",
                          "base_efficiency", "spread_efficiency",
                          "base_round_load", "spread_round_load",
                          "predicted_slowdown_base",
                          "predicted_slowdown_spread",
                          "predicted_slowdown_rounds_base",
                          "predicted_slowdown_rounds_spread"}
        assert r["predicted_slowdown_base"] == pytest.approx(
            (base["base_efficiency"] / r["base_efficiency"] - 1) * 100,
            abs=0.006)
    # per-round model: stock updn puts 204 flows' worth of worst links on
    # the 63 rounds (mean 3.238), osmoffset one flow per link and round
    assert base["base_round_load"] == pytest.approx(204 / 63)
    for lmc in (0, 1, 2):
        assert rows[("updn", lmc, "on")]["base_round_load"] == 1.0
        assert rows[("updn", lmc, "on")]["predicted_slowdown_rounds_base"] \
            == pytest.approx((63 / 204 - 1) * 100, abs=0.006)
    for lmc in (1, 2):
        on, off = rows[("updn", lmc, "on")], rows[("updn", lmc, "off")]
        assert on["predicted_slowdown_base"] < off["predicted_slowdown_base"]
        assert on["predicted_slowdown_spread"] < \
            off["predicted_slowdown_spread"]


def test_predict_bad_net(tmp_path):
    p = run_ab(["--predict", "--net", str(tmp_path / "missing.net")])
    assert p.returncode == 2
    assert p.stderr == "alltoall-ab: --net %s: no such file\n" % (
        tmp_path / "missing.net")


# ----------------------------------------------------------------------
# The library: conf guard, benchmark location, launchers
# ----------------------------------------------------------------------

def test_conf_guard_restores_on_exception(tmp_path):
    conf = tmp_path / "opensm.conf"
    conf.write_text(CONF)
    marker = tmp_path / "restarted"
    guard = smconf.ConfGuard(str(conf))
    with pytest.raises(ValueError, match="boom"):
        with guard.session("touch %s" % marker) as run:
            assert os.path.exists(guard.backup)
            guard.apply(2, "minhop", "on")
            assert conf.read_text() == CONF_LMC2_ON
            raise ValueError("boom")
    # other exceptions pass on, after the restore and the final restart
    assert conf.read_bytes() == CONF.encode()
    assert not os.path.exists(guard.backup)
    assert run.restored is True and run.failure is None
    assert marker.exists()


@pytest.mark.parametrize("exc", [
    StepError("step"), Interrupted(15),
    KeyboardInterrupt()])
def test_conf_guard_keeps_failures_for_later(tmp_path, exc):
    conf = tmp_path / "opensm.conf"
    conf.write_text(CONF)
    guard = smconf.ConfGuard(str(conf))
    with guard.session("true", keep_backup=True) as run:
        guard.apply(1, "updn", "off")
        raise exc
    assert run.failure is exc and run.restored is True
    assert conf.read_bytes() == CONF.encode()
    # --keep-backup: the backup stays, identical to the original
    assert open(guard.backup, "rb").read() == CONF.encode()


def test_conf_guard_unchanged_file_no_restart(tmp_path):
    conf = tmp_path / "opensm.conf"
    conf.write_text(CONF)
    marker = tmp_path / "restarted"
    guard = smconf.ConfGuard(str(conf))
    with guard.session("touch %s" % marker) as run:
        pass
    assert run.restored and not marker.exists()
    assert conf.read_text() == CONF


def test_conf_guard_bad_file(tmp_path):
    conf = tmp_path / "opensm.conf"
    conf.write_bytes(b"lmc 0\n\xff\n")
    with pytest.raises(UsageError,
                       match=r"opensm.conf, line 2: not UTF-8 text"):
        smconf.ConfGuard(str(conf))


def _exe(path):
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


def test_find_bench_order(tmp_path, monkeypatch):
    from osmoffset import paths
    env_bench = _exe(tmp_path / "env-bench")
    libexec = tmp_path / "libexec"
    libexec.mkdir()
    inst = _exe(libexec / "a2a-bench")
    onpath = tmp_path / "bin"
    onpath.mkdir()
    _exe(onpath / "a2a-bench-smpi")
    monkeypatch.setenv("PATH", str(onpath))
    monkeypatch.setenv("OSMOFFSET_A2A_BENCH", env_bench)
    assert a2a_bench.find_bench() == env_bench
    monkeypatch.setenv("OSMOFFSET_A2A_BENCH", str(tmp_path / "none"))
    with pytest.raises(UsageError,
                       match=r"\$OSMOFFSET_A2A_BENCH=.*none: no executable"):
        a2a_bench.find_bench()
    monkeypatch.delenv("OSMOFFSET_A2A_BENCH")
    monkeypatch.delenv("OSMOFFSET_A2A_BENCH_SMPI", raising=False)
    # an installation: no source tree, PKGLIBEXECDIR, then PATH
    monkeypatch.setattr(paths, "source_root", lambda: None)
    monkeypatch.setattr(paths, "installed_dir",
                        lambda k: str(libexec) if k == "pkglibexecdir"
                        else None)
    assert a2a_bench.find_bench() == inst
    assert a2a_bench.find_bench("a2a-bench-smpi") == \
        str(onpath / "a2a-bench-smpi")
    monkeypatch.setattr(paths, "installed_dir", lambda k: None)
    assert a2a_bench.find_bench() is None
    # nothing built and no source: --bench is the way
    with pytest.raises(UsageError, match="give --bench PATH"):
        a2a_bench.mpi_bench(None, str(tmp_path / "build"))


def test_find_bench_source_tree(tmp_path, monkeypatch):
    from osmoffset import paths
    root = tmp_path / "src"
    (root / "bench" / "alltoall").mkdir(parents=True)
    src = root / "bench" / "alltoall" / "a2a-bench.c"
    src.write_text("int main(void) { return 0; }\n")
    built = _exe(root / "bench" / "alltoall" / "a2a-bench")
    for var in ("OSMOFFSET_A2A_BENCH", "OSMOFFSET_A2A_BENCH_SMPI"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    monkeypatch.setattr(paths, "source_root", lambda: str(root))
    monkeypatch.setattr(paths, "installed_dir", lambda k: None)
    assert a2a_bench.find_bench() == built
    assert a2a_bench.source() == str(src)
    # older than its source: not used (make has not rebuilt it)
    os.utime(built, (1, 1))
    assert a2a_bench.find_bench() is None


def test_launcher_commands():
    from osmoffset.alltoall import launch
    args = a2a_bench.bench_args("/o/b.csv", "shift", [8, 1024], 5, 1)
    assert args == ["--csv", "/o/b.csv", "--pattern", "shift", "--sizes",
                    "8,1024", "--iters", "5", "--warmup", "1", "--quiet"]
    assert launch.launcher_cmd("srun", "/b", ["-x"], 64,
                               "-N 64 --ntasks-per-node=1") == \
        ["srun", "-n", "64", "-N", "64", "--ntasks-per-node=1", "/b", "-x"]
    assert launch.launcher_cmd("mpirun", "/b", [], None, "",
                               "/h/hosts") == \
        ["mpirun", "--hostfile", "/h/hosts", "/b"]


def test_version():
    p = run_ab(["--version"])
    assert p.returncode == 0
    assert p.stdout == "alltoall-ab (osmoffset) 0.1.0\n"
