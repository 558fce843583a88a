"""Test-suite wide settings: every test below tests/torch/ carries the `torch`
marker, so that the sanitizer stage of tools/test.sh can leave them out
(`-m "not torch"`): torch is not installed in the ASan venv."""
import os

TORCH_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch") + os.sep


def pytest_configure(config):
    config.addinivalue_line("markers", "torch: needs PyTorch (every test under tests/torch/)")


def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        if str(item.path).startswith(TORCH_DIR):
            item.add_marker(pytest.mark.torch)
