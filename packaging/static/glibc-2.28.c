/* What the static librl (scripts/build-static, glibc floor 2.34) needs from
 * glibc beyond 2.28, for a program or module linked against glibc 2.28's
 * symbols (the Python wheels: scripts/build-wheels links this beside
 * librl.a). Only the two symbols that the linked module would otherwise
 * leave unversioned, and so unresolvable on a glibc older than they are:
 *
 * __libc_single_threaded (glibc 2.32): libstdc++ skips atomic reference
 * counts while it is true. Ours is always false: atomics always, as on a
 * glibc without it.
 *
 * pthread_cond_clockwait (glibc 2.30): libstdc++'s std::condition_variable
 * waits with it on CLOCK_MONOTONIC. Where the running glibc has it, it is
 * called; else the deadline is moved to CLOCK_REALTIME for
 * pthread_cond_timedwait, which is what libstdc++ itself does without it.
 * That is right for std::condition_variable, whose condition variables have
 * the default clock, CLOCK_REALTIME (its only caller in librl: Boost.Asio's,
 * on CLOCK_MONOTONIC, wait with pthread_cond_timedwait). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>

char __libc_single_threaded = 0;

typedef int (*clockwait_fn)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const struct timespec*);

int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                           const struct timespec* abstime);

/* glibc's, or 0 when it has none: looked up once. */
static clockwait_fn system_clockwait(void) {
  static clockwait_fn found;
  static int looked;
  if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
    clockwait_fn f = (clockwait_fn)dlsym(RTLD_NEXT, "pthread_cond_clockwait");
    __atomic_store_n(&found, f, __ATOMIC_RELAXED);
    __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
  }
  return __atomic_load_n(&found, __ATOMIC_RELAXED);
}

int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                           const struct timespec* abstime) {
  clockwait_fn f = system_clockwait();
  if (f) return f(cond, mutex, clock, abstime);
  if (clock == CLOCK_REALTIME) return pthread_cond_timedwait(cond, mutex, abstime);
  struct timespec now_clock, now_real;
  clock_gettime(clock, &now_clock);
  clock_gettime(CLOCK_REALTIME, &now_real);
  long long ns = (long long)(abstime->tv_sec - now_clock.tv_sec) * 1000000000LL +
                 (abstime->tv_nsec - now_clock.tv_nsec) + now_real.tv_nsec;
  struct timespec real = {now_real.tv_sec + (time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
  if (real.tv_nsec < 0) {
    real.tv_nsec += 1000000000L;
    real.tv_sec -= 1;
  }
  return pthread_cond_timedwait(cond, mutex, &real);
}
