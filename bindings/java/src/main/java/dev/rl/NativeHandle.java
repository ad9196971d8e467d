package dev.rl;

import java.lang.ref.Cleaner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * A native pointer and the function that frees it. Calls count themselves in while they use the
 * pointer; freeing first refuses new calls (at once: they never wait, so a completion stage on
 * rl's thread cannot block behind a close), then waits for the calls in progress, so rl's "*_free
 * must not race other calls" holds. A Cleaner frees what the program forgot to close. Callers
 * use the pointer only through {@link #with}, {@link #run}, {@link #start} and {@link #close}
 * (and the one hot path, RateLimiter.call, through {@link #acquire}/{@link #release}).
 */
final class NativeHandle {
  private static final Cleaner CLEANER = Cleaner.create();
  private static final AtomicLong LIVE = new AtomicLong();

  private static final int CLOSED = 1 << 30;
  /** Calls using the pointer, plus CLOSED once free() began. */
  private final AtomicInteger users = new AtomicInteger();
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

  /**
   * call's result on the pointer, counted in use meanwhile; RateLimitException SHUTDOWN "<what> is
   * closed" once freeing began.
   */
  <T> T with(LongFunction<T> call) {
    long pointer = acquire();
    try {
      return call.apply(pointer);
    } finally {
      release();
    }
  }

  /** {@link #with} for a call that returns nothing. */
  void run(LongConsumer call) {
    long pointer = acquire();
    try {
      call.accept(pointer);
    } finally {
      release();
    }
  }

  /**
   * Starts an asynchronous call that completes {@code result}, and returns it; when the call cannot
   * start (the handle is closed, or librl refused it with RateLimitException), a future failed
   * with that exception instead: async methods never throw it.
   */
  <T> CompletableFuture<T> start(CompletableFuture<T> result, LongConsumer call) {
    try {
      run(call);
    } catch (RateLimitException e) {
      return CompletableFuture.failedFuture(e);
    }
    return result;
  }

  /**
   * Closes once: runs {@code beforeFree} on the pointer unless freeing already began (so a second
   * close does nothing), then frees it ({@link #free}).
   */
  void close(LongConsumer beforeFree) {
    long pointer;
    try {
      pointer = acquire();
    } catch (RateLimitException closed) {
      return;
    }
    try {
      beforeFree.accept(pointer);
    } finally {
      release();
    }
    free();
  }

  /**
   * The pointer, counted as in use: call {@link #release} after, in a finally. Only for a hot path
   * where {@link #with}'s lambda would capture the call's arguments (an allocation per call).
   */
  long acquire() {
    for (; ; ) {
      int now = users.get();
      if ((now & CLOSED) != 0) {
        throw new RateLimitException(Status.SHUTDOWN, what + " is closed");
      }
      if (users.compareAndSet(now, now + 1)) return freer.pointer;
    }
  }

  void release() {
    if (users.decrementAndGet() == CLOSED) {
      synchronized (this) {
        notifyAll();
      }
    }
  }

  /** Frees the pointer once, after every call in progress returned. Idempotent. */
  void free() {
    users.getAndUpdate(now -> now | CLOSED);
    boolean interrupted = false;
    synchronized (this) {
      while (users.get() != CLOSED) {
        try {
          wait();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      cleanable.clean();
    }
    if (interrupted) Thread.currentThread().interrupt();
  }

  /** Native handles not yet freed, in the whole JVM (for leak tests). */
  static long live() {
    return LIVE.get();
  }
}
