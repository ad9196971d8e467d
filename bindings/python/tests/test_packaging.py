"""`pip wheel ./bindings/python` gives a wheel that installs into a fresh
virtual environment and runs the quick start as written."""

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def run(*cmd, **kwargs):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, **kwargs)
    assert proc.returncode == 0, f"{cmd}: {proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def test_the_wheel_installs_into_a_fresh_venv_and_runs_the_quick_start(tmp_path):
    wheels = tmp_path / "wheels"
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheels, ROOT / "bindings" / "python")
    (wheel,) = wheels.glob("rl-*.whl")
    assert "cp3" in wheel.name and "linux" in wheel.name  # a platform wheel with the SWIG module
    fresh = tmp_path / "venv"
    venv.create(fresh, with_pip=True)
    python = fresh / "bin" / "python"
    run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    out = run(python, ROOT / "examples" / "python" / "quickstart.py", cwd=tmp_path, env=env)
    assert "5: allowed=True remaining=0" in out and "6: allowed=False" in out
    assert "async: 5 of 7 allowed" in out and "after waiting: True" in out
    typed = run(python, "-c", "import rl, pathlib; print((pathlib.Path(rl.__file__).parent / 'py.typed').exists())", cwd=tmp_path, env=env)
    assert typed.strip() == "True"
