"""Shard 1 of the per-page phone pass (tests/test_browser_phone.py says what it checks and why
it is split)."""

from __future__ import annotations

import pytest

from test_browser_phone import browser, check_page, phone_tab, server, shard  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.site, pytest.mark.browser]


@pytest.mark.parametrize("name, lang", shard(1))
def test_page_on_a_phone(phone_tab, server, lang, name):  # noqa: F811 (a fixture imported above)
    check_page(phone_tab, server, lang, name)
