/* The static librl's own arc4random (scripts/build-static links it in and
 * makes it local): libstdc++'s std::random_device refers to glibc's, which
 * is new in glibc 2.36, and would alone raise the oldest glibc the bundled
 * library runs on from 2.34 to 2.36. Like glibc's, it never fails: it ends
 * the process when the kernel gives no randomness. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>

uint32_t arc4random(void);

uint32_t arc4random(void) {
  uint32_t value;
  for (;;) {
    ssize_t n = getrandom(&value, sizeof value, 0);
    if (n == (ssize_t)sizeof value) {
      return value;
    }
    if (n < 0 && errno != EINTR) {
      abort();
    }
  }
}
