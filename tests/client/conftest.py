import os
import subprocess
import sys
from pathlib import Path

import pytest

ABCD = Path(sys.executable).with_name("abcd")


@pytest.fixture
def in_repo(repo, monkeypatch):
    path, sha = repo
    monkeypatch.chdir(path)
    return path, sha


@pytest.fixture
def cli():
    """Run the real `abcd` executable; returns (returncode, stdout, stderr)."""

    def run(*args, input=None, cwd=None, env=None):
        res = subprocess.run([str(ABCD), *args], input=input, capture_output=True, cwd=cwd,
                             env=env or dict(os.environ), timeout=120)
        return res.returncode, res.stdout.decode(errors="replace"), res.stderr.decode(errors="replace")

    return run
