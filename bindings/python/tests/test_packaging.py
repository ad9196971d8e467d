"""`pip wheel ./bindings/python` gives a wheel that installs into a fresh
virtual environment and runs the quick start as written: linked to this
checkout's librl (the default), or with librl built from the checkout's
CMake project and shipped inside it (RL_BUNDLE_LIBRL=ON)."""

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BUILD = Path(os.environ.get("RL_BUILD_DIR", ROOT / "build"))


def run(*cmd, **kwargs):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=900, **kwargs)
    assert proc.returncode == 0, f"{cmd}: {proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


@pytest.mark.parametrize("bundle", [False, True], ids=["linked", "bundled"])
def test_the_wheel_installs_into_a_fresh_venv_and_runs_the_quick_start(tmp_path, bundle):
    wheels = tmp_path / "wheels"
    options = []
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "RL_LIB_DIR", "RL_INCLUDE_DIR")
    }
    if bundle:
        # librl's own build, kept between runs (2 cores: -j2)
        options = ["-C", "cmake.define.RL_BUNDLE_LIBRL=ON", "-C", f"build-dir={BUILD / 'python' / 'bundle'}"]
        env["CMAKE_BUILD_PARALLEL_LEVEL"] = "2"
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "-q",
        "--no-deps",
        *options,
        "-w",
        wheels,
        ROOT / "bindings" / "python",
        env=env,
    )
    (wheel,) = wheels.glob("rl-*.whl")
    assert "cp3" in wheel.name and "linux" in wheel.name  # a platform wheel with the SWIG module
    fresh = tmp_path / "venv"
    venv.create(fresh, with_pip=True)
    python = fresh / "bin" / "python"
    run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel)
    out = run(python, ROOT / "examples" / "python" / "quickstart.py", cwd=tmp_path, env=env)
    assert "5: allowed=True remaining=0" in out and "6: allowed=False" in out
    assert "async: 5 of 7 allowed" in out and "after waiting: True" in out
    package = Path(
        run(python, "-c", "import rl, os; print(os.path.dirname(rl.__file__))", cwd=tmp_path, env=env).strip()
    )
    assert (package / "py.typed").exists()
    (module,) = package.glob("_native*.so")
    librl = next(line for line in run("ldd", module).splitlines() if "librl.so.1" in line)
    if bundle:
        assert str(package / "librl.so.1") in librl, librl  # the wheel's own copy, through $ORIGIN
    else:
        assert str(BUILD / "capi") in librl, librl
