"""The type hints hold: mypy --strict on the installed package (py.typed),
and on a program using it the way the README shows."""

import subprocess
import sys
import textwrap


def test_mypy_strict_passes_on_the_package_and_its_users(tmp_path):
    user = tmp_path / "user.py"
    user.write_text(textwrap.dedent("""
        import asyncio
        import rl
        from rl.langchain import RedisRateLimiter

        def sync() -> float:
            with rl.open("memory://", timeout_ms=50) as store:
                limiter = store.limiter(limit=["10/s", "100/m"], burst=[5, 50], name="api")
                d: rl.Decision = limiter.acquire(b"user:42", 2, timeout=0.5)
                ds: list[rl.Decision] = limiter.acquire_batch(["a", ("b", 2)])
                stats: rl.StoreStats = store.stats()
                return d.retry_after + ds[0].reset_after + stats.round_trips.p99

        async def main() -> bool:
            async with await rl.aopen("memory://") as store:
                limiter = store.limiter(limit="5/s")
                d = await limiter.aacquire_wait("k", max_wait=1.0)
                return d.allowed and d.source is rl.Source.STORE

        ok: bool = RedisRateLimiter(requests_per_second=2).acquire(blocking=False)
        """))
    for target in (["-p", "rl"], [str(user)]):
        proc = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *target],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
