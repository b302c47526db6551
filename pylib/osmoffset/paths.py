"""Where osmoffset's files are: in a source tree, or installed.

The tools run from two places: scripts/ of a source tree (the package is
pylib/osmoffset beside them) and an installation (make install, the
Debian or RPM packages), where make install writes the module
osmoffset._installdirs with the installation's directories.  Library code
finds repository files only through this module.
"""

import os
import shutil
import sys


def source_root():
    """The source tree this package is imported from (the directory that
    holds configure.ac, scripts/ and pylib/), or None when installed."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.realpath(__file__))))
    if os.path.isfile(os.path.join(here, "configure.ac")) and \
            os.path.isdir(os.path.join(here, "scripts")):
        return here
    return None


def installed_dir(key):
    """A directory make install recorded in osmoffset._installdirs
    (e.g. "pkgdatadir", "pkglibexecdir", "bindir"), or None."""
    try:
        from osmoffset import _installdirs
    except ImportError:
        return None
    return getattr(_installdirs, key.upper(), None)


def tool_argv(name):
    """The argv prefix that runs the osmoffset tool `name` (osm-sim,
    lft-analyze, ...): [python, <root>/scripts/name] in a source tree,
    [<bindir>/name] or [name found on PATH] when installed.  Raises
    FileNotFoundError naming the tool when there is none."""
    root = source_root()
    if root:
        for sub in ("scripts", "sim-topologies"):
            p = os.path.join(root, sub, name)
            if os.path.isfile(p):
                return [sys.executable, p]
    bindir = installed_dir("bindir")
    if bindir and os.path.isfile(os.path.join(bindir, name)):
        return [os.path.join(bindir, name)]
    p = shutil.which(name)
    if p:
        return [p]
    raise FileNotFoundError("osmoffset tool %s not found" % name)


def fabrics_dir():
    """The curated ibsim fabrics: <root>/sim-topologies in a source tree,
    <pkgdatadir>/sim-topologies when installed; None if neither exists."""
    root = source_root()
    if root:
        return os.path.join(root, "sim-topologies")
    d = installed_dir("pkgdatadir")
    if d and os.path.isdir(os.path.join(d, "sim-topologies")):
        return os.path.join(d, "sim-topologies")
    return None


def built_plugin_dir():
    """<root>/.libs when the source tree has a built libosmoffset.so, else
    None (installed: opensm finds the plugin on the loader's path)."""
    root = source_root()
    if root and os.path.isfile(os.path.join(root, ".libs",
                                            "libosmoffset.so")):
        return os.path.join(root, ".libs")
    return None
