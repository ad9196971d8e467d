/* The C worker of scripts/demo: hammers one key through one shared limit and
 * prints what it was admitted as one JSON line per thread.
 *
 *   rl_demo_worker URL NAME LIMIT KEY ATTEMPTS [THREADS]
 *
 * It opens its store and limiter, prints "ready", and waits for the start
 * signal (a line on stdin, or its end) before its first call, so that every
 * worker of the demo starts at the same instant (examples/README.md).
 * With several threads (the memory:// fallback of the demo) the threads share
 * the one store and limiter, and each prints its own line. */
#include <inttypes.h>
#include <pthread.h>
#include <rl/rl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t start_together;

typedef struct worker {
  rl_limiter* limiter;
  const char* key;
  long attempts;
  long admitted;
  long denied;
  int64_t min_retry_us;
  int64_t max_retry_us;
  int64_t first_call_us; /* wall clock, comparable across processes */
  int64_t last_return_us;
  rl_status status;
  char message[256];
} worker;

static int64_t wall_clock_us(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

static void* hammer(void* arg) {
  worker* w = arg;
  w->min_retry_us = -1;
  pthread_barrier_wait(&start_together);
  w->first_call_us = wall_clock_us();
  for (long i = 0; i < w->attempts; i++) {
    rl_request req = {
        .version = RL_REQUEST_VERSION, .key = w->key, .key_len = strlen(w->key), .cost = 1};
    rl_decision d = {.version = RL_DECISION_VERSION};
    rl_error* err = NULL;
    w->status = rl_limiter_acquire(w->limiter, &req, &d, &err);
    if (w->status != RL_OK) {
      snprintf(w->message, sizeof w->message, "%s", rl_error_message(err));
      rl_error_free(err);
      return NULL;
    }
    if (d.allowed) {
      w->admitted++;
      continue;
    }
    w->denied++;
    if (w->min_retry_us < 0 || d.retry_after_us < w->min_retry_us)
      w->min_retry_us = d.retry_after_us;
    if (d.retry_after_us > w->max_retry_us) w->max_retry_us = d.retry_after_us;
  }
  w->last_return_us = wall_clock_us();
  return NULL;
}

static int fail(rl_error* err) {
  fprintf(stderr, "rl_demo_worker: %s: %s\n", rl_status_name(rl_error_status(err)),
          rl_error_message(err));
  rl_error_free(err);
  return 1;
}

/* Opens the limiter; a peek (which records nothing) then makes the first
 * round trip, so that connecting and loading scripts happen before "ready". */
static int open_limiter(char** argv, rl_store** store, rl_limiter** limiter) {
  rl_error* err = NULL;
  if (rl_store_open(argv[1], NULL, store, &err) != RL_OK) return fail(err);
  rl_config* cfg = rl_config_new();
  const int ok = cfg != NULL && rl_config_set(cfg, "algorithm", "gcra", &err) == RL_OK &&
                 rl_config_set(cfg, "name", argv[2], &err) == RL_OK &&
                 rl_config_set(cfg, "limit", argv[3], &err) == RL_OK &&
                 rl_limiter_new(*store, cfg, limiter, &err) == RL_OK;
  rl_config_free(cfg);
  if (!ok) return err != NULL ? fail(err) : 1;
  rl_request warm = {
      .version = RL_REQUEST_VERSION, .key = argv[4], .key_len = strlen(argv[4]), .cost = 0};
  rl_decision d = {.version = RL_DECISION_VERSION};
  if (rl_limiter_peek(*limiter, &warm, &d, &err) != RL_OK) return fail(err);
  return 0;
}

/* The start signal: a line on stdin, or its end. */
static void wait_for_start(void) {
  int c;
  while ((c = getchar()) != EOF && c != '\n') {
  }
}

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    fprintf(stderr, "usage: %s URL NAME LIMIT KEY ATTEMPTS [THREADS]\n", argv[0]);
    return 2;
  }
  const int threads = argc == 7 ? atoi(argv[6]) : 1;
  if (threads < 1 || threads > 64) {
    fprintf(stderr, "rl_demo_worker: THREADS must be 1 to 64\n");
    return 2;
  }
  rl_store* store = NULL;
  rl_limiter* limiter = NULL;
  if (open_limiter(argv, &store, &limiter) != 0) {
    rl_limiter_free(limiter);
    rl_store_free(store);
    return 1;
  }

  worker workers[64];
  pthread_t ids[64];
  pthread_barrier_init(&start_together, NULL, (unsigned)threads + 1);
  for (int t = 0; t < threads; t++) {
    workers[t] = (worker){.limiter = limiter, .key = argv[4], .attempts = atol(argv[5])};
    pthread_create(&ids[t], NULL, hammer, &workers[t]);
  }
  printf("ready\n");
  fflush(stdout);
  wait_for_start();
  pthread_barrier_wait(&start_together); /* releases the threads */
  int rc = 0;
  for (int t = 0; t < threads; t++) {
    pthread_join(ids[t], NULL);
    worker* w = &workers[t];
    if (w->status != RL_OK) {
      fprintf(stderr, "rl_demo_worker: %s: %s\n", rl_status_name(w->status), w->message);
      rc = 1;
      continue;
    }
    char name[32] = "c";
    if (threads > 1) snprintf(name, sizeof name, "c-thread-%d", t + 1);
    printf(
        "{\"worker\":\"%s\",\"pid\":%d,\"admitted\":%ld,\"denied\":%ld,\"first_call_us\":%" PRId64
        ",\"last_return_us\":%" PRId64 ",\"retry_after_ms\":[",
        name, (int)getpid(), w->admitted, w->denied, w->first_call_us, w->last_return_us);
    if (w->denied > 0) {
      printf("%" PRId64 ",%" PRId64, w->min_retry_us / 1000, w->max_retry_us / 1000);
    }
    printf("]}\n");
  }
  pthread_barrier_destroy(&start_together);
  rl_limiter_free(limiter);
  rl_store_free(store);
  return rc;
}
