"""Every test's earshot data dir is a temporary one: commands the tests run in the sandbox keep
its lock there (`agent.sandbox.placeholders.Placeholders`), and nothing may land in the real home.

`vendor_sdks` imports the vendor SDKs once per worker, for tests that stream through them, and
the tests that take seconds each are collected first (`LONG_FIRST`)."""

from __future__ import annotations

import importlib
import signal
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis measures the machine in two places: a per-example deadline and the "data generation
# too slow" health check. On a loaded machine both fail tests that are fine, so both are off.
settings.register_profile("earshot", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("earshot")


# Started as a shell's background job, the suite inherits SIGINT ignored, and so would every
# server it starts (which then rightly keeps ignoring it): the Ctrl-C tests need the default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True, scope="session")
def _temporary_data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
        yield


@pytest.fixture(scope="session")
def vendor_sdks() -> None:
    """Import the vendor SDKs once per worker, outside any test's `fail_after`: the first import
    of `anthropic` alone takes seconds on a loaded machine, and a hang detector must not time
    it. (What the product imports lazily is checked in fresh subprocesses, not here.)"""
    for name in (
        "anthropic",
        "anthropic.types",
        "openai",
        "openai.types.chat",
        "openai.types.responses",
        "google.genai",
        "google.genai.types",
        "google.genai.errors",
    ):
        importlib.import_module(name)


LONG_FIRST = (
    "tests/acp_server/test_concurrency.py",
    "tests/acp_server/test_concurrency_processes.py",
    "tests/acp_server/test_crash.py",
    "tests/acp_server/test_sdk_clients.py",
    "tests/earshot/test_mcp.py",
    "tests/earshot/test_trust_cli.py",
    "tests/earshot/test_doctor.py",
    "tests/earshot/test_mcp_names.py",
    "tests/agent/test_context.py::test_a_300_turn_session_never_sends_a_request_over_the_window",
)
"""Modules or tests that take seconds each: run first, so that at the end of a parallel run no
worker is left alone with one of them while the other has nothing to do."""


def pytest_configure(config: pytest.Config) -> None:
    # structlog takes earshot's configuration at the first line logged (`providers.logs`): taken
    # here, before any test, so that no test's `capture_logs` is replaced by it mid-test (which
    # test logs first in a worker depends on how xdist shares the tests out).
    from providers.logs import get_logger

    get_logger("tests").debug("the test session starts")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        return next(
            (n for n, prefix in enumerate(LONG_FIRST) if item.nodeid.startswith(prefix)),
            len(LONG_FIRST),
        )

    items.sort(key=rank)
