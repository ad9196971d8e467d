"""The redis-py sorted-set sliding window rl's rl.compat replaces, as its
authors wrote it (one pipeline: ZREMRANGEBYSCORE, ZADD, ZCARD, EXPIRE), in
its sync form and on redis.asyncio."""

import time


def is_allowed(r, user_id: str, limit: int = 100, window: int = 60) -> bool:
    key = f"rate:{user_id}"
    now = time.time()
    pipeline = r.pipeline()
    pipeline.zremrangebyscore(key, 0, now - window)
    pipeline.zadd(key, {f"{now}-{user_id}": now})
    pipeline.zcard(key)
    pipeline.expire(key, window)
    _, _, count, _ = pipeline.execute()
    return count <= limit


async def ais_allowed(r, user_id: str, limit: int = 100, window: int = 60) -> bool:
    key = f"rate:{user_id}"
    now = time.time()
    pipeline = r.pipeline()
    pipeline.zremrangebyscore(key, 0, now - window)
    pipeline.zadd(key, {f"{now}-{user_id}": now})
    pipeline.zcard(key)
    pipeline.expire(key, window)
    _, _, count, _ = await pipeline.execute()
    return count <= limit
