"""osmoffset Python tooling: fabric/LFT readers, the ibsim/OpenSM runner,
routing analysis, and the command-line tools (osmoffset.cli)."""

# Kept equal to AC_INIT's version in configure.ac (a test checks it).
__version__ = "0.1.0"
