from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _sdks_before_the_clock(vendor_sdks: None) -> None:
    """Every provider test runs with the vendor SDKs already imported (see `vendor_sdks`)."""
