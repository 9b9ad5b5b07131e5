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
import unicodedata
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


# a config.json holds a few KiB (the largest real ones about 100 KiB): a file past this is
# refused before it is read
MAX_CONFIG_BYTES = 4 * 2**20


def _fail(message: str) -> int:
    """Report bad input argparse's way, on one line: ``posenc explain: error: ...``; status 2.
    Characters a terminal may act on (from the file) are printed escaped."""
    from .hf.explain import _printable

    line = _printable(" ".join(message.split()))
    try:
        print(f"{_EXPLAIN}: error: {line}", file=sys.stderr)
    except UnicodeEncodeError:  # Chinese on an ASCII stderr
        sys.stderr.buffer.write(f"{_EXPLAIN}: error: {line}\n".encode())
        sys.stderr.flush()
    return 2


def _write(text: str, *, as_json: bool = False) -> None:
    """Print ``text``; as UTF-8 bytes where stdout's encoding cannot hold it (Chinese text on an
    ASCII terminal). A reader that stops early (``| head``) is not an error. Characters a
    terminal may act on (from the file) are escaped: as Python writes them (``\\x1b``), or in
    JSON as JSON does (``\\u001b``), which reads back as the file's string."""
    from .hf.explain import _UNSAFE, _printable

    if as_json:
        text = "".join(
            ch
            if ch == "\n" or unicodedata.category(ch) not in _UNSAFE
            else json.dumps(ch, ensure_ascii=True)[1:-1]
            for ch in text
        )
    else:
        text = _printable(text, keep="\n")
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
    zh = args.lang == "zh"
    loaded = _load_config(args.config, zh)
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
    except (TypeError, ValueError) as exc:  # the message names the key; it stays English
        return _fail(f"{path}：配置有误：{exc}" if zh else f"{path}: {exc}")
    _write(text, as_json=args.json)
    return 0


def _load_config(name: str, zh: bool = False) -> tuple[Path, dict[str, Any]] | str:
    """The config as a dict with a string model_type, or the one-line reason it is not (in
    Chinese for ``zh``)."""
    path = Path(name)
    if path.is_dir():
        if not (path / "config.json").is_file():
            return (
                f"{path} 是一个文件夹，其中没有 config.json"
                if zh
                else (f"{path} is a folder without a config.json")
            )
        path = path / "config.json"
    limit = f"{MAX_CONFIG_BYTES // 2**20} MiB"
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:  # refused unread: a config.json holds a few KiB
            return (
                f"{path} 有 {size} 字节（{_size(size)}）：config.json 通常只有几 KiB（最大的真实"
                f"文件约 100 KiB），超过 {limit} 的文件不予读取"
                if zh
                else f"{path} is {size} bytes ({_size(size)}): a config.json holds a few KiB "
                f"(the largest real ones about 100 KiB); a file past {limit} is not read"
            )
        with path.open("rb") as f:  # a device or a pipe has no size: read up to the limit
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return f"{path}：文件不存在" if zh else f"{path}: no such file"
    except OSError as exc:
        why = exc.strerror or exc
        return f"{path}：无法读取（{why}）" if zh else f"{path}: cannot read it ({why})"
    if len(raw) > MAX_CONFIG_BYTES:
        return (
            f"{path} 超过 {limit}（读到 {limit} 仍未结束）：config.json 通常只有几 KiB，不予读取"
            if zh
            else f"{path} holds more than {limit} (still going after {limit}): a config.json "
            "holds a few KiB; not read further"
        )
    not_json = f"{path} 不是 JSON" if zh else f"{path} is not JSON"
    try:
        # bytes: json detects UTF-8 (with or without a BOM), UTF-16 and UTF-32 itself
        config = json.loads(raw)
    except json.JSONDecodeError as exc:
        return (
            f"{not_json}：第 {exc.lineno} 行第 {exc.colno} 列{_json_error_zh(exc.msg)}"
            if zh
            else f"{not_json}: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        )
    except UnicodeDecodeError as exc:
        return (
            f"{not_json}：不是 UTF-8 文本（第 {exc.start} 字节无法解码）"
            if zh
            else f"{not_json}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        )
    except RecursionError:
        return (
            f"{path} 不是配置文件能容纳的 JSON：嵌套过深"
            if zh
            else f"{path} is not JSON a config can hold: nested too deeply"
        )
    except ValueError as exc:  # an integer of more than 4300 digits (sys.int_max_str_digits)
        return (
            f"{path} 不是配置文件能容纳的 JSON：其中有位数超过 {sys.get_int_max_str_digits()} 的整数"
            if zh
            else f"{path} is not JSON a config can hold: {exc}"
        )
    if not isinstance(config, dict):
        kind = _json_kind(config)
        return (
            f"{path} 应当是一个 JSON 对象（transformers 的 config.json），实际是 JSON {kind}"
            if zh
            else f"{path} must hold a JSON object (a transformers config.json), got a JSON {kind}"
        )
    where = _surrogate(config)
    if where is not None:
        return (
            f"{path}：{where} 含有孤立的代理码位（surrogate），不是 Unicode 文本：JSON 中的 "
            "\\ud800 一类转义必须成对出现"
            if zh
            else f"{path}: {where} holds a lone surrogate, which is not Unicode text (JSON's "
            "\\ud800-style escapes come in pairs)"
        )
    if config.get("model_type") is None:
        return (
            f"{path} 没有 model_type 键：每个 transformers 的 config.json 都有它，决定配对方式的"
            "模型代码由它选出"
            if zh
            else f"{path} has no model_type key: every transformers config.json names one, and "
            "the model's code, which decides the pairing, is chosen by it"
        )
    if not isinstance(config["model_type"], str):
        kind = _json_kind(config["model_type"])
        return (
            f"{path}：model_type 应当是字符串，实际是 JSON {kind}"
            if zh
            else f"{path}: model_type must be a string, got a JSON {kind}"
        )
    return path, config


# the json module's messages (CPython's _json and json.decoder), in Chinese
_JSON_ERRORS_ZH = {
    "Expecting value": "处缺少一个值",
    "Expecting ',' delimiter": "处缺少逗号",
    "Expecting ':' delimiter": "处缺少冒号",
    "Expecting property name enclosed in double quotes": "处应为用双引号括起的键名",
    "Extra data": "起有多余的内容",
    "Unterminated string starting at": "起的字符串没有结束",
    "Invalid control character at": "处有字符串中不允许的控制字符",
    "Invalid \\escape": "处有无效的 \\ 转义",
    "Invalid \\uXXXX escape": "处有无效的 \\uXXXX 转义",
    "Illegal trailing comma before end of object": "处对象末尾多了逗号",
    "Illegal trailing comma before end of array": "处数组末尾多了逗号",
}


def _json_error_zh(msg: str) -> str:
    """A JSONDecodeError's message in Chinese, to follow "第 L 行第 C 列" (the English one,
    after a colon, for a message not in the table)."""
    return _JSON_ERRORS_ZH.get(msg, f"：{msg}")


def _size(n: int) -> str:
    """``n`` bytes in a unit a reader takes in: ``6.0 GiB``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _surrogate(config: Any) -> str | None:
    """Where the first string of ``config`` (a key or a value) holding a lone surrogate is, as
    ``config['key'][0]`` (the surrogate escaped), or None. Iterative: JSON nests deeply."""
    stack: list[tuple[str, Any]] = [("config", config)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                here = f"{where}[{key!r}]"
                if isinstance(key, str) and _has_surrogate(key):
                    return here
                stack.append((here, item))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(value))
        elif isinstance(value, str) and _has_surrogate(value):
            return where
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


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
            ),
            as_json=True,
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
