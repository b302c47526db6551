"""The packaging of the Python side: pyproject.toml builds, pip installs
the package and its console scripts without the network, and the tools
that pyproject.toml, make install (Makefile.am's OSMOFFSET_TOOLS), the man
pages and the Debian/RPM packages know are the same list."""

import os
import re
import shutil
import subprocess

import pytest

from conftest import PYTHON, REPO

try:
    import tomllib
except ImportError:         # Python < 3.11
    tomllib = None

CLI_DIR = os.path.join(REPO, "pylib", "osmoffset", "cli")


def read(rel):
    with open(os.path.join(REPO, rel)) as f:
        return f.read()


def pyproject_scripts():
    text = read("pyproject.toml")
    if tomllib:
        return dict(tomllib.loads(text)["project"]["scripts"])
    sect = text.split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    return dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]+)"', sect, re.M))


def makefile_tools():
    text = read("Makefile.am").replace("\\\n", " ")
    m = re.search(r"^OSMOFFSET_TOOLS\s*=(.*)$", text, re.M)
    assert m, "Makefile.am has no OSMOFFSET_TOOLS"
    return dict(tm.split(":") for tm in m.group(1).split())


def test_tool_lists_agree():
    scripts = pyproject_scripts()
    tools = makefile_tools()
    assert sorted(scripts) == sorted(tools)
    for tool, target in scripts.items():
        assert target == "osmoffset.cli.%s:main" % tools[tool], tool
    am = read("Makefile.am")
    for tool in tools:
        assert "man/%s.1" % tool in am, "no man page for %s" % tool
        assert os.path.isfile(os.path.join(REPO, "man", tool + ".1")), tool
        assert tool in read("osmoffset.spec.in"), tool


def test_pyproject_version_is_the_package_version():
    from osmoffset import __version__
    assert 'version = {attr = "osmoffset.__version__"}' in \
        read("pyproject.toml")
    m = re.search(r"AC_INIT\(\[osmoffset\], \[([^]]+)\]", read("configure.ac"))
    assert m and m.group(1) == __version__


@pytest.fixture(scope="module")
def pip_target(tmp_path_factory):
    """pip install --no-deps --no-build-isolation --no-index --target DIR
    of a copy of the tree's Python side (the source tree may be read-only,
    as in make distcheck, and setuptools writes build files beside it)."""
    try:
        subprocess.run([PYTHON, "-m", "pip", "--version"], check=True,
                       capture_output=True)
        subprocess.run([PYTHON, "-c", "import setuptools"], check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("pip or setuptools missing for %s (apt-get install "
                    "python3-pip python3-setuptools)" % PYTHON)
    base = tmp_path_factory.mktemp("pip")
    src = base / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README", "COPYING"):
        shutil.copy(os.path.join(REPO, name), str(src / name))
    shutil.copytree(os.path.join(REPO, "pylib"), str(src / "pylib"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc",
                                                  "*.egg-info"))
    target = base / "target"
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_ROOT_USER_ACTION="ignore", PIP_NO_INPUT="1")
    proc = subprocess.run(
        [PYTHON, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(target), str(src)],
        capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return target


def run_installed(target, tool, *args):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "OSMOFFSET_SRCDIR")}
    env["PYTHONPATH"] = str(target)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run([str(target / "bin" / tool)] + list(args),
                          capture_output=True, text=True, env=env,
                          cwd="/", timeout=120)


def test_pip_install_gives_the_package_and_scripts(pip_target):
    pkg = pip_target / "osmoffset"
    assert (pkg / "__init__.py").is_file()
    assert (pkg / "cli" / "__init__.py").is_file()
    assert (pkg / "cli" / "rank_order.py").is_file()
    for tool in pyproject_scripts():
        assert (pip_target / "bin" / tool).is_file(), tool
    # every module of the tree is in the installation
    tree = sorted(os.path.relpath(os.path.join(d, f), os.path.join(
        REPO, "pylib")) for d, _, fs in os.walk(os.path.join(
            REPO, "pylib", "osmoffset")) for f in fs if f.endswith(".py"))
    for rel in tree:
        assert (pip_target / rel).is_file(), rel


@pytest.mark.parametrize("tool", sorted(pyproject_scripts()))
def test_pip_installed_tool_version(pip_target, tool):
    module = pyproject_scripts()[tool].split(":")[0].rsplit(".", 1)[1]
    assert os.path.isfile(os.path.join(CLI_DIR, module + ".py")), module
    proc = run_installed(pip_target, tool, "--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "%s (osmoffset) %s" % (
        tool, __import__("osmoffset").__version__)


def test_pip_installed_rank_order_runs(pip_target, tmp_path):
    net = os.path.join(REPO, "sim-topologies", "ft2-8x4.net")
    proc = run_installed(pip_target, "rank-order", "--topology", net,
                         "--format", "slurm")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("h0000,h0001,")
    proc = run_installed(pip_target, "rank-order", "--topology",
                         str(tmp_path / "missing.net"))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


def tool_paths():
    tools = [os.path.join(REPO, "scripts", t)
             for t in sorted(os.listdir(os.path.join(REPO, "scripts")))
             if t != "install-deps"]
    return tools + [os.path.join(REPO, "sim-topologies", "gen-fabric")]


@pytest.mark.parametrize("path", tool_paths(), ids=os.path.basename)
def test_every_tool_answers_version(path):
    """Every tool of the tree, Python or shell, says its name and the
    package version."""
    from osmoffset import __version__
    proc = subprocess.run([path, "--version"], stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "%s (osmoffset) %s" % (
        os.path.basename(path), __version__)
