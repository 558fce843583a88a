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


def open_report(driver, index_html, fragment=""):
    """Load a report page from file:// and wait until it has rendered."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("file://" + os.path.abspath(index_html) + fragment)
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return window.depyfReportRenderedAt !== undefined"))


def wait_for(driver, css, text=None, timeout=20):
    """The first element matching `css` (containing `text`, when given) once it is shown."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def found(d):
        for el in d.find_elements(By.CSS_SELECTOR, css):
            if el.is_displayed() and (text is None or text in el.text):
                return el
        return False
    return WebDriverWait(driver, timeout).until(found, "no %s%s" % (css, " with %r" % text if text else ""))


def console_errors(driver):
    """The page's JavaScript errors so far (console messages of level SEVERE)."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def screenshot(driver, name):
    """Save the page as ARTIFACTS/name.png; returns the path."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    path = os.path.join(ARTIFACTS, name + ".png")
    driver.save_screenshot(path)
    return path
