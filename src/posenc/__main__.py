"""``python -m posenc``: the command line, also installed as the ``posenc`` script.

Each command is a subparser whose ``handler`` takes the parsed arguments and returns the exit
status; a new command adds one ``_add_<name>`` function and one line in :func:`build_parser`.
Nothing here imports torch.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

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
    _add_explain(commands)
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


# --- explain: what a transformers model does with positions (posenc.hf) ----------------------

_EXPLAIN = "posenc explain"


def _add_explain(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = commands.add_parser(
        "explain",
        help="what a transformers model does with positions, read from its config.json",
        description="Read a local transformers config.json (or a checkpoint folder holding one) "
        "and print what the model does with positions: each parameter and the config key it "
        "came from, the exact posenc call, and the pitfalls of a port (posenc.hf.describe). "
        "Nothing is downloaded. Exit status 2 on bad input, and for a model_type posenc.hf has "
        "no verified row for: it is reported on stderr with what a description would need, "
        "never guessed.",
    )
    cmd.add_argument(
        "config",
        nargs="?",
        metavar="CONFIG.json",
        help="a config.json file, or a folder holding one",
    )
    cmd.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the text")
    cmd.add_argument(
        "--json",
        action="store_true",
        help="print the explanation as JSON (schema posenc.explain/1: identical layers grouped, "
        "each group's posenc call, the pitfalls) instead of the text",
    )
    cmd.add_argument(
        "--list", action="store_true", help="list the known model types, grouped by convention"
    )
    cmd.set_defaults(handler=_explain, usage=cmd.format_usage)


def _fail(message: str) -> int:
    """Report bad input argparse's way, on one line: ``posenc explain: error: ...``; status 2."""
    print(f"{_EXPLAIN}: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def _write(text: str) -> None:
    """Print ``text``; as UTF-8 bytes where stdout's encoding cannot hold it (Chinese text on an
    ASCII terminal). A reader that stops early (``| head``) is not an error."""
    try:
        try:
            print(text, flush=True)
        except UnicodeEncodeError:
            sys.stdout.buffer.write((text + "\n").encode("utf-8"))
            sys.stdout.buffer.flush()
    except BrokenPipeError:
        # Python's documented recipe: point stdout at devnull so the exit flush does not fail
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _explain(args: argparse.Namespace) -> int:
    if args.list:
        if args.config is not None:
            return _fail("give CONFIG.json or --list, not both")
        return _explain_list(args.lang, as_json=args.json)
    if args.config is None:
        sys.stderr.write(args.usage())
        return _fail("the following arguments are required: CONFIG.json (or --list)")
    loaded = _load_config(args.config)
    if isinstance(loaded, str):
        return _fail(loaded)
    path, config = loaded

    import posenc.hf

    try:
        scheme = posenc.hf.describe(config)
        if scheme.kind == "unknown" and args.lang == "zh":
            return _fail(
                f"{path}：posenc.hf 不描述 model_type {scheme.model_type!r}（它认识 "
                f"{len(posenc.hf.MODELS)} 个经过验证的模型类型，见 {_EXPLAIN} --list）。"
                + "".join(scheme.notes_zh)
            )
        if scheme.kind == "unknown":
            return _fail(
                f"{path}: model_type {scheme.model_type!r} is not described by posenc.hf "
                f"(it knows {len(posenc.hf.MODELS)} verified model types; see {_EXPLAIN} "
                f"--list). {' '.join(scheme.notes)}"
            )
        if args.json:
            from posenc.hf.explain import _explain_dict

            data = _explain_dict(scheme, args.lang)
            text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
        else:
            text = scheme.explain(args.lang)
    except (TypeError, ValueError) as exc:
        return _fail(f"{path}: {exc}")
    _write(text)
    return 0


def _load_config(name: str) -> tuple[Path, dict[str, Any]] | str:
    """The config as a dict with a string model_type, or the one-line reason it is not."""
    path = Path(name)
    if path.is_dir():
        if not (path / "config.json").is_file():
            return f"{path} is a folder without a config.json"
        path = path / "config.json"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return f"{path}: no such file"
    except OSError as exc:
        return f"{path}: cannot read it ({exc.strerror or exc})"
    try:
        # bytes: json detects UTF-8 (with or without a BOM), UTF-16 and UTF-32 itself
        config = json.loads(raw)
    except json.JSONDecodeError as exc:
        return f"{path} is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
    except UnicodeDecodeError as exc:
        return f"{path} is not JSON: not UTF-8 text ({exc.reason} at byte {exc.start})"
    except RecursionError:
        return f"{path} is not JSON a config can hold: nested too deeply"
    if not isinstance(config, dict):
        return (
            f"{path} must hold a JSON object (a transformers config.json), got a JSON "
            f"{_json_kind(config)}"
        )
    if config.get("model_type") is None:
        return (
            f"{path} has no model_type key: every transformers config.json names one, and the "
            "model's code, which decides the pairing, is chosen by it"
        )
    if not isinstance(config["model_type"], str):
        return f"{path}: model_type must be a string, got a JSON {_json_kind(config['model_type'])}"
    return path, config


def _json_kind(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, dict) else "null"


def _explain_list(lang: str, *, as_json: bool) -> int:
    import posenc.hf

    groups: dict[str, list[str]] = {}
    for model_type, row in sorted(posenc.hf.MODELS.items()):
        groups.setdefault(row.convention, []).append(model_type)
    version = posenc.hf.TRANSFORMERS_VERSION
    if as_json:
        _write(
            json.dumps(
                {"transformers": version, "conventions": groups}, indent=2, ensure_ascii=False
            )
        )
        return 0
    n = len(posenc.hf.MODELS)
    if lang == "zh":
        lines = [f"posenc.hf 已知 {n} 种模型类型（transformers {version}），按约定分组："]
    else:
        lines = [f"posenc.hf knows {n} model types (transformers {version}), by convention:"]
    for name in sorted(groups, key=lambda c: (-len(groups[c]), c)):
        conv = posenc.hf.CONVENTIONS[name]
        title = conv.title_zh if lang == "zh" else conv.title_en
        lines.append(f"{name} ({len(groups[name])}): {title}")
        lines.append("  " + ", ".join(groups[name]))
    _write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
