"""osmoffset.benchcells: the cell runner and cache that bench-quality,
bench-fabrics, bench-degraded and bench-spread share.

The cells here route nothing (sim None) or fail osm-sim at once, so the
file runs in a few seconds without ibsim."""

import json
import os

import pytest

from osmoffset import benchcells


def count(task):
    """How often measure() ran for this cell (a file in the cell dir:
    measure runs in a worker process)."""
    try:
        with open(os.path.join(task["dir"], "runs")) as f:
            return len(f.read())
    except FileNotFoundError:
        return 0


def measure(task, res, osmlog):
    """A measure() that counts its runs and ends as the task says."""
    os.makedirs(task["dir"], exist_ok=True)
    with open(os.path.join(task["dir"], "runs"), "a") as f:
        f.write("x")
    res["status"] = task["outcome"]
    res["orders"] = {o: {"base": 1.0} for o in task.get("has", ["topo"])}
    if task["outcome"] == "error":
        res["error"] = "measured badly"


def measure_raises(task, res, osmlog):
    raise ValueError("a bug in the benchmark")


def task(tmp_path, name, outcome="ok", **kw):
    t = {"id": ("fab", name, 0), "dir": str(tmp_path / name), "sim": None,
         "key": {"argv": [name], "net_sha": "0"}, "good": ("ok",),
         "force": False, "fields": {"fabric": "fab", "config": name,
                                    "lmc": 0},
         "measure": measure, "outcome": outcome}
    t.update(kw)
    return t


def test_cache_reuses_only_good_cells(tmp_path):
    tasks = [task(tmp_path, "good"), task(tmp_path, "bad", "error"),
             task(tmp_path, "fails", "fails", good=("ok", "fails"))]
    first = benchcells.run_all(tasks, 2)
    assert {k[1]: r["status"] for k, r in first.items()} == \
        {"good": "ok", "bad": "error", "fails": "fails"}
    assert not any(r["cached"] for r in first.values())
    for t in tasks:
        with open(os.path.join(t["dir"], "cell.json")) as f:
            assert json.load(f)["key"] == t["key"]
    again = benchcells.run_all(tasks, 2)
    # ok and a status the benchmark calls good come from the cache; the
    # error cell is measured again
    assert again[("fab", "good", 0)]["cached"] is True
    assert again[("fab", "fails", 0)]["cached"] is True
    assert again[("fab", "bad", 0)]["cached"] is False
    assert [count(t) for t in tasks] == [1, 2, 1]


def test_cache_needs_the_same_key_and_the_figures(tmp_path):
    t = task(tmp_path, "c")
    benchcells.run_all([t], 1)
    assert benchcells.run_all([t], 1)[t["id"]]["cached"] is True
    assert count(t) == 1
    # another key (say, a new plugin build) redoes the cell
    t2 = dict(t, key={"argv": ["c"], "net_sha": "1"})
    assert benchcells.run_all([t2], 1)[t["id"]]["cached"] is False
    assert count(t) == 2
    # a cell without a rank order the run now needs is redone
    t3 = dict(t2, need=["topo", "random"])
    assert benchcells.run_all([t3], 1)[t["id"]]["cached"] is False
    assert count(t) == 3
    # --force redoes it; no key: no cache at all
    assert benchcells.run_all([dict(t3, force=True)], 1)[t["id"]][
        "cached"] is False
    t4 = dict(t, key=None, dir=str(tmp_path / "nokey"))
    benchcells.run_all([t4], 1)
    assert benchcells.run_all([t4], 1)[t["id"]]["cached"] is False
    assert count(t4) == 2
    assert not os.path.exists(os.path.join(t4["dir"], "cell.json"))


def test_cached_cell_keeps_its_directory_field(tmp_path):
    t = task(tmp_path, "d")
    t["fields"]["dir"] = t["dir"]
    benchcells.run_all([t], 1)
    r = benchcells.run_all([t], 1)[t["id"]]
    assert r["cached"] and r["dir"] == t["dir"]


def test_failing_osm_sim_cell_is_reported_with_its_command(tmp_path):
    missing = str(tmp_path / "missing.net")
    out = str(tmp_path / "cell")
    t = task(tmp_path, "cell", sim=["--net", missing, "--out", out,
                                     "--quiet"], log_errors=True)
    lines = []
    res = benchcells.run_all([t], 1, lines.append)[t["id"]]
    assert res["status"] == "error"
    assert res["error"].startswith("osm-sim exit 2: ")
    assert missing in res["error"]
    assert res["command"] == "osm-sim --net %s --out %s --quiet" % (
        missing, out)
    assert res["log_errors"] == []
    assert count(t) == 0                # not measured
    assert lines[0].startswith("[1/1] fab cell lmc 0: error ")
    assert lines[-1] == "  command: " + res["command"]
    # the failed cell is on disk but is not reused
    assert os.path.isfile(os.path.join(out, "cell.json"))
    assert benchcells.run_all([t], 1)[t["id"]]["cached"] is False


def test_a_cell_that_raises_is_an_error_cell(tmp_path):
    t = task(tmp_path, "boom", measure=measure_raises)
    lines = []
    res = benchcells.run_all([t, task(tmp_path, "fine")], 2,
                             lines.append)
    r = res[t["id"]]
    assert r["status"] == "error" and r["cached"] is False
    assert r["error"] == "ValueError: a bug in the benchmark"
    assert (r["fabric"], r["config"], r["lmc"]) == ("fab", "boom", 0)
    assert res[("fab", "fine", 0)]["status"] == "ok"
    assert "  ValueError: a bug in the benchmark" in lines
    assert not os.path.exists(os.path.join(t["dir"], "cell.json"))


def test_plugin_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("OSMOFFSET_PLUGIN_DIR", str(tmp_path))
    assert benchcells.plugin_file() == str(tmp_path / "libosmoffset.so")
    assert benchcells.plugin_sha() is None
    (tmp_path / "libosmoffset.so").write_bytes(b"x")
    assert benchcells.plugin_sha() == benchcells.file_sha(
        str(tmp_path / "libosmoffset.so"))


@pytest.mark.parametrize("text, lmcs", [("0,2", [0, 2]), ("2 1,1", [1, 2])])
def test_lmc_list(text, lmcs):
    from osmoffset import benchreport
    assert benchreport.lmc_list(text) == lmcs


BENCHES = ["bench-quality", "bench-fabrics", "bench-degraded",
           "bench-spread", "bench-analyze", "bench-shapes"]


@pytest.mark.parametrize("tool", BENCHES)
def test_bench_scripts_are_thin(tool):
    from conftest import REPO
    path = os.path.join(REPO, "scripts", tool)
    with open(path) as f:
        text = f.read()
    assert text.startswith("#!/usr/bin/python3\n")
    assert "from osmoffset.cli.%s import main  # noqa: E402\n" \
        % tool.replace("-", "_") in text
    assert text.rstrip().endswith("sys.exit(main())")
    assert "os.path.realpath(__file__)" in text
    assert "importlib" not in text and "SourceFileLoader" not in text
    assert len(text.splitlines()) <= 20
    assert os.access(path, os.X_OK)


@pytest.mark.parametrize("tool", BENCHES)
def test_every_bench_has_version_also_linked_onto_path(tool, tmp_path):
    from conftest import REPO, run_script
    link = tmp_path / tool
    link.symlink_to(os.path.join(REPO, "scripts", tool))
    for path in (os.path.join(REPO, "scripts", tool), str(link)):
        p = run_script(path, ["--version"], timeout=60)
        assert (p.returncode, p.stdout, p.stderr) == \
            (0, "%s (osmoffset) 0.1.0\n" % tool, "")


def test_cli_modules_take_argv(capsys):
    from osmoffset.cli import bench_fabrics, bench_quality
    assert bench_quality.main(["--lmc", "5"]) == 2
    assert capsys.readouterr().err == \
        "bench-quality: --lmc: values must be 0..3\n"
    assert bench_fabrics.main(["--jobs", "0"]) == 2
    assert capsys.readouterr().err == "bench-fabrics: --jobs must be >= 1\n"


@pytest.mark.parametrize("name, lmc", [("ft4-l2", 2), ("ft2x2-l0", None)])
def test_analysis_in_process_is_lft_analyze_json(tmp_path, name, lmc):
    """The cells' figures are lft-analyze's: the analysis in process gives
    the JSON that lft-analyze --json --bisections 0 prints."""
    import shutil
    from conftest import REPO, run_script
    fix = os.path.join(REPO, "tests", "python", "fixtures", "analyze")
    shutil.copy(os.path.join(fix, name + ".lfts.dump"),
                str(tmp_path / "opensm-lfts.dump"))
    shutil.copy(os.path.join(fix, name + ".subnet.lst"),
                str(tmp_path / "opensm-subnet.lst"))
    args = ["--lfts", str(tmp_path / "opensm-lfts.dump"), "--topology",
            str(tmp_path / "opensm-subnet.lst"), "--json", "--bisections",
            "0"] + (["--lmc", str(lmc)] if lmc is not None else [])
    p = run_script(os.path.join(REPO, "scripts", "lft-analyze"), args)
    assert p.returncode in (0, 1), p.stderr
    tool = json.loads(p.stdout)
    ours = json.loads(json.dumps(benchcells.analysis(str(tmp_path), lmc)))
    for r in (tool, ours):
        r.pop("seconds")
    assert ours == tool
