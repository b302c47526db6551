"""Command-line entry points of the osmoffset tools.

Each tool is a module osmoffset.cli.<tool> (dashes become underscores)
with main(argv=None) -> int.  The files in scripts/ and the installed
tools only find the package and call that main(); no tool imports
another tool: code that two tools share lives in the package.
"""

import argparse
import sys

from osmoffset import __version__


def add_version(parser, prog=None):
    """Give an argparse parser the --version every tool has:
    "<prog> (osmoffset) <version>"."""
    parser.add_argument("--version", action="version",
                        version="%s (osmoffset) %s" % (
                            prog or parser.prog, __version__))


def tool_parser(tool):
    """An argparse parser class whose usage errors, also those of its
    sub-commands' parsers, name the tool: the usage, then "TOOL: error:
    MESSAGE" on stderr and exit status 2."""
    class Parser(argparse.ArgumentParser):
        def error(self, message):
            self.print_usage(sys.stderr)
            sys.stderr.write("%s: error: %s\n" % (tool, message))
            sys.exit(2)
    return Parser


def doc_parser(prog, doc, usage=None, parser_class=argparse.ArgumentParser):
    """An argparse parser whose description is the first line of doc
    (the tool's help text) and whose epilog is the rest, kept as
    written."""
    head, rest = doc.split("\n", 1)
    return parser_class(prog=prog, usage=usage, description=head,
                        epilog=rest.strip(),
                        formatter_class=argparse.RawDescriptionHelpFormatter)


def os_error_text(exc):
    """An OSError as a tool prints it: "reason" or "reason: file"."""
    return "%s%s" % (exc.strerror or exc,
                     (": " + exc.filename)
                     if getattr(exc, "filename", None) else "")
