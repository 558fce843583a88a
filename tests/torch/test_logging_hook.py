"""depyf.install() / uninstall(): with TORCH_LOGS=+bytecode, Dynamo's log shows
the decompiled source right after each MODIFIED BYTECODE, and only while installed."""
import os
import re
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402
from depyf import _decompiled  # noqa: E402

pytestmark = pytest.mark.torch

# Subprocesses import the depyf this test imported (the installed one under
# tools/test.sh, the checkout's in a developer build).
DEPYF_HOME = os.path.dirname(os.path.dirname(os.path.abspath(depyf.__file__)))

SCRIPT = """
import torch
import depyf

def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b

def after_uninstall(a):
    return torch.cos(a) + 2

depyf.install()
depyf.install()  # a second call changes nothing
torch.compile(toy_example, backend="eager")(torch.ones(4), -torch.ones(4))
depyf.uninstall()
torch.compile(after_uninstall, backend="eager")(torch.ones(4))
depyf.uninstall()  # harmless when not installed
print("DONE")
"""


@pytest.fixture(scope="module")
def bytecode_log(tmp_path_factory):
    script = tmp_path_factory.mktemp("logging") / "logged.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, TORCH_LOGS="+bytecode",
               PYTHONPATH=DEPYF_HOME + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0 and "DONE" in proc.stdout, proc.stderr[-3000:]
    return proc.stderr


def sections(log):
    """{code name: text after its MODIFIED BYTECODE up to the next bytecode header}."""
    log = re.sub(r"(?m)^[VIWEDC]\d{4} \S+ \d+ \S+\] (?:\[[^\]]*\] )*", "", log)  # torch's log prefix
    parts = re.split(r"(?m)^.*(?=(?:ORIGINAL|MODIFIED) BYTECODE )", log)
    found = {}
    for part in parts:
        match = re.match(r"MODIFIED BYTECODE (\S+)", part)
        if match:
            found.setdefault(match.group(1), []).append(part)
    return found


def depyf_notes(text):
    return re.findall(r"possible source code:|depyf could not decompile", text)


def test_each_modified_bytecode_gets_one_depyf_note_only_while_installed(bytecode_log):
    found = sections(bytecode_log)
    assert "toy_example" in found and "after_uninstall" in found, sorted(found)
    resumed = [name for name in found if name.startswith("torch_dynamo_resume_in_toy_example")]
    assert resumed, "the resume function is compiled (and logged) too"
    for name in ["toy_example"] + resumed:
        for text in found[name]:
            assert len(depyf_notes(text)) == 1, text
    assert all(not depyf_notes(text) for text in found["after_uninstall"])


def test_the_note_is_the_decompiled_source(bytecode_log):
    """Needs the decompiler."""
    [text] = sections(bytecode_log)["toy_example"]
    assert re.search(r"possible source code:\n(async )?def toy_example\(a, b\):", text), text


def test_nothing_is_decompiled_while_the_bytecode_log_is_off(monkeypatch):
    calls = []
    monkeypatch.setattr(_decompiled, "decompile", lambda code: calls.append(code))
    torch._dynamo.reset()
    depyf.install()
    try:
        torch.compile(lambda x: x * 3, backend="eager")(torch.ones(2))
    finally:
        depyf.uninstall()
    assert calls == []
