"""The API pages' signatures: mkdocstrings-python formats a long one with Black, in process,
when Black is installed (requirements/site.in has it), else with one ``ruff format`` process per
signature, else not at all. Issue 42: no hook patches mkdocstrings for it (hooks/api_speed.py
memoised the Ruff formatter through a private function), and ``make build`` (the site lock,
which has no Ruff) formats them as ``make test`` does.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from ci_rule import require

ROOT = Path(__file__).resolve().parent.parent


def _hooks() -> list[str]:
    loader = type("Loader", (yaml.SafeLoader,), {})
    loader.add_constructor("!ENV", lambda ld, node: ld.construct_sequence(node)[-1])
    loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda ld, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=loader)
    return config["hooks"]


def test_the_site_lock_has_black():
    lock = (ROOT / "requirements" / "site.txt").read_text(encoding="utf-8")
    assert any(line.startswith("black==") for line in lock.splitlines())


def test_api_signatures_are_formatted_by_black_in_process():
    """mkdocstrings-python picks Black when it is installed (the site lock has it), else one
    ``ruff format`` process per long signature; no hook of mkdocs.yml patches it."""
    assert "hooks/api_speed.py" not in _hooks()
    assert not (ROOT / "hooks" / "api_speed.py").exists()
    require("black")
    rendering = require("mkdocstrings_handlers.python._internal.rendering")
    rendering._get_formatter.cache_clear()
    formatter = rendering._get_formatter()
    assert "format_str" in formatter.__code__.co_freevars  # Black's, not Ruff's (ruff_bin)
    long = "def f(alpha=1, beta=2, gamma=3, delta=4, epsilon=5, zeta=6, eta=7, theta=8): pass"
    assert formatter(long, 40).count("\n") > 3  # formatted, not returned as it came
