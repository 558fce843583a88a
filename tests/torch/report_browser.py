"""A headless Chromium for the report tests: installed on first use, driven by Selenium.

The install is idempotent: Debian's `chromium` and `chromium-driver` through
apt-get (as root) when /usr/bin/chromium or /usr/bin/chromedriver is missing,
and Selenium through pip when it cannot be imported.  A test skips (with the
reason) only when that installation is impossible.  Screenshots go to
$DEPYF_TEST_ARTIFACTS, by default build/test-artifacts in the checkout.
"""

import contextlib
import os
import shutil
import subprocess
import sys

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = os.environ.get("DEPYF_TEST_ARTIFACTS") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build", "test-artifacts")


def _install():
    """None when Chromium, its driver and Selenium are usable, else why not."""
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        if not shutil.which("apt-get") or os.geteuid() != 0:
            return "chromium and chromium-driver are not installed and apt-get cannot run here (not root)"
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for cmd in (["apt-get", "update", "-qq"],
                    ["apt-get", "install", "-y", "-qq", "chromium", "chromium-driver"]):
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
            if proc.returncode != 0:
                return "%s failed: %s" % (" ".join(cmd), proc.stderr[-500:])
    try:
        import selenium  # noqa: F401
    except ImportError:
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "selenium"],
                              capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            return "pip install selenium failed: %s" % proc.stderr[-500:]
    return None


@contextlib.contextmanager
def chromium(width=1440, height=1000):
    """A Selenium WebDriver for headless Chromium (skips the test if none can be had)."""
    problem = _install()
    if problem:
        pytest.skip("no headless browser: " + problem)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=%d,%d" % (width, height)):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


# The report renders a view when the URL's hash changes, in the hashchange event: after
# a click or history step the old view is still shown for a while.  The page marks the
# view it has completed (#main[data-route] is the hash it shows) and counts its renders
# (window.depyfReportRenders); the helpers below wait for those before a test reads.
_RENDERED = ("return window.depyfReportRenders !== undefined && "
             "document.getElementById('main').getAttribute('data-route') === location.hash ? "
             "window.depyfReportRenders : null")


def _wait_rendered(driver, after=0, timeout=20):
    """Wait until the view of the current URL is on screen, rendered after render number `after`."""
    from selenium.webdriver.support.ui import WebDriverWait

    def rendered(d):
        n = d.execute_script(_RENDERED)
        return n is not None and n > after
    WebDriverWait(driver, timeout).until(rendered, "the report did not render %s" % driver.current_url)


def open_report(driver, index_html, fragment="", timeout=30):
    """Load a report page from file:// as a new document and wait until it has rendered."""
    # A page that differs from the current one only in its fragment would not be reloaded.
    driver.get("about:blank")
    driver.get("file://" + os.path.abspath(index_html) + fragment)
    _wait_rendered(driver, timeout=timeout)


def _navigate(driver, action, timeout):
    before = driver.execute_script("return window.depyfReportRenders") or 0
    action()
    _wait_rendered(driver, before, timeout)


def follow(driver, element, timeout=20):
    """Click `element`, which leads to another view of the report, and wait until that view is shown."""
    _navigate(driver, element.click, timeout)


def back(driver, timeout=20):
    """The browser's back button, then wait until the previous view is shown again."""
    _navigate(driver, driver.back, timeout)


def wait_for(driver, css, text=None, timeout=20):
    """The first element matching `css` (containing `text`, when given) once it is shown."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def found(d):
        for el in d.find_elements(By.CSS_SELECTOR, css):
            if el.is_displayed() and (text is None or text in el.text):
                return el
        return False
    # A view being replaced meanwhile (the search box renders as one types) leaves stale elements: look again.
    return WebDriverWait(driver, timeout, ignored_exceptions=[StaleElementReferenceException]).until(
        found, "no %s%s" % (css, " with %r" % text if text else ""))


def console_errors(driver):
    """The page's JavaScript errors so far (console messages of level SEVERE)."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def screenshot(driver, name):
    """Save the page as ARTIFACTS/name.png; returns the path."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    path = os.path.join(ARTIFACTS, name + ".png")
    driver.save_screenshot(path)
    return path
