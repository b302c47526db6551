"""Command-line entry points of the osmoffset tools.

Each tool is a module osmoffset.cli.<tool> (dashes become underscores)
with main(argv=None) -> int.  The files in scripts/ and the installed
tools only find the package and call that main(); no tool imports
another tool: code that two tools share lives in the package.
"""

from osmoffset import __version__


def add_version(parser, prog=None):
    """Give an argparse parser the --version every tool has:
    "<prog> (osmoffset) <version>"."""
    parser.add_argument("--version", action="version",
                        version="%s (osmoffset) %s" % (
                            prog or parser.prog, __version__))
