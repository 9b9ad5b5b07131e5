"""Shard 2 of the per-page phone pass (tests/test_browser_phone.py says what it checks and why
it is split)."""

from __future__ import annotations

import pytest

from test_browser_phone import (  # noqa: F401 (fixtures)
    on_a_phone,
    phone_tab,
    phone_verdicts,
    shard,
)

pytestmark = [pytest.mark.site, pytest.mark.browser]


@pytest.mark.parametrize("name, lang", shard(2))
def test_page_on_a_phone(request, phone_verdicts, server, lang, name):  # noqa: F811 (fixtures)
    on_a_phone(request, phone_verdicts, server, lang, name)
