"""A depyf hook that fails keeps the user's program running (one warning,
torch goes on), which would also hide the failure from a test.  Here every
failure is recorded and a test that did not ask for one fails.  Also the
`browser` the report tests drive."""
import pytest

import depyf._torch_internals as ti
import report_browser


@pytest.fixture(autouse=True)
def no_hook_fails(request, monkeypatch):
    failures = []
    real = ti._callback_failed

    def record(what, exc):
        failures.append("%s: %s: %s" % (what, type(exc).__name__, exc))
        real(what, exc)

    monkeypatch.setattr(ti, "_callback_failed", record)
    yield failures
    if "hook_failures_expected" not in request.keywords:
        assert not failures, "depyf hooks failed: %s" % failures


def pytest_configure(config):
    config.addinivalue_line("markers", "hook_failures_expected: the test makes depyf hooks fail")


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for the report tests of one module (see report_browser.py)."""
    with report_browser.chromium() as driver:
        yield driver
