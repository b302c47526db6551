"""osmoffset Python tooling: fabric/LFT parsers and routing analysis."""

__version__ = "0.1"
