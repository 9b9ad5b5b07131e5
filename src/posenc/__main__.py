"""``python -m posenc``: the command line, also installed as the ``posenc`` script.

Each command is a subparser whose ``handler`` takes the parsed arguments and returns the exit
status; a new command adds one ``_add_<name>`` function and one line in :func:`build_parser`.
Nothing here imports torch.
"""

from __future__ import annotations

import argparse
import platform
import sys
from collections.abc import Sequence
from importlib import metadata

from ._version import __version__

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The ``posenc`` argument parser with every command."""
    parser = argparse.ArgumentParser(
        prog="posenc",
        description="Transformer position encodings: the posenc command line.",
    )
    parser.add_argument("--version", action="version", version=f"posenc {__version__}")
    commands = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    commands.required = True
    _add_version(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    args = build_parser().parse_args(argv)
    status: int = args.handler(args)
    return status


def _add_version(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = commands.add_parser(
        "version",
        help="print the versions of posenc, Python, NumPy and PyTorch (for bug reports)",
        description="Print the versions of posenc, Python, NumPy and PyTorch. PyTorch is "
        "looked up in the installed metadata, never imported.",
    )
    cmd.set_defaults(handler=_version)


def _version(args: argparse.Namespace) -> int:
    print(f"posenc {__version__}")
    print(f"python {platform.python_version()}")
    for dist in ("numpy", "torch"):
        try:
            found = metadata.version(dist)
        except metadata.PackageNotFoundError:
            found = "not installed"
        print(f"{dist} {found}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
