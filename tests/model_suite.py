"""What the model suites (tests/<suite>/test_*.py, run by pytest from the
ctest cases of tests/CMakeLists.txt) share: where the binary, the zoo and
the cache are, the command line, and a fixture that exports a suite's
models once per module with one of the scripts/ exporters.

A suite imports it after putting this folder on sys.path:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from model_suite import BINARY, collage_cli, exported_models
"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.environ.get("COLLAGE_BINARY", os.path.join(ROOT, "build", "collage"))
CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                     "collage")
ZOO = os.environ.get("COLLAGE_ZOO_DIR") or os.path.join(CACHE, "zoo")


def collage_cli(*args, timeout=1200):
    """`collage ARGS...`, its output captured as text."""
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout)


def exported_models(script, *args, timeout=600, needs_torch=True):
    """A module-scoped fixture: the folder into which `scripts/SCRIPT DIR ARGS...`
    wrote its models. With `needs_torch`, the suite is skipped when the
    script cannot import PyTorch or torchvision; without, the script's
    models that need it are left out by the script itself."""
    @pytest.fixture(scope="module")
    def exported(tmp_path_factory):
        directory = str(tmp_path_factory.mktemp(os.path.splitext(script)[0]))
        done = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", script), directory,
                               *[str(a) for a in args]],
                              capture_output=True, text=True, timeout=timeout)
        if needs_torch and "No module named 'torch" in done.stderr:
            pytest.skip("PyTorch or torchvision missing")
        assert done.returncode == 0, done.stderr
        return directory
    return exported
