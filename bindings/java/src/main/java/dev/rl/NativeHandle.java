package dev.rl;

import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.LongConsumer;

/**
 * A native pointer and the function that frees it. Calls hold the read lock while they use the
 * pointer; freeing takes the write lock, so rl's "*_free must not race other calls" holds. A
 * Cleaner frees what the program forgot to close.
 */
final class NativeHandle {
  private static final Cleaner CLEANER = Cleaner.create();
  private static final AtomicLong LIVE = new AtomicLong();

  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final Freer freer;
  private final Cleaner.Cleanable cleanable;
  private final String what;

  /** The Cleaner's action: holds no reference to the owner. */
  private static final class Freer implements Runnable {
    private long pointer;
    private final LongConsumer free;

    Freer(long pointer, LongConsumer free) {
      this.pointer = pointer;
      this.free = free;
    }

    @Override
    public void run() {
      long p = pointer;
      pointer = 0;
      if (p != 0) {
        free.accept(p);
        LIVE.decrementAndGet();
      }
    }
  }

  NativeHandle(Object owner, long pointer, LongConsumer free, String what) {
    this.freer = new Freer(pointer, free);
    this.what = what;
    LIVE.incrementAndGet();
    this.cleanable = CLEANER.register(owner, freer);
  }

  /** The pointer, with the read lock held: call {@link #release} after. */
  long acquire() {
    lock.readLock().lock();
    if (freer.pointer == 0) {
      lock.readLock().unlock();
      throw new RateLimitException(Status.SHUTDOWN, what + " is closed");
    }
    return freer.pointer;
  }

  void release() {
    lock.readLock().unlock();
  }

  /** Frees the pointer once, after every call in progress returned. */
  void free() {
    lock.writeLock().lock();
    try {
      cleanable.clean();
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** Native handles not yet freed, in the whole JVM (for leak tests). */
  static long live() {
    return LIVE.get();
  }
}
