/* The README's C example: 5 requests per second on one key. */
#include <rl/rl.h>
#include <stdio.h>

int main(void) {
  rl_store* store;
  rl_limiter* limiter;
  rl_config* cfg = rl_config_new();
  rl_error* err = NULL;
  if (rl_store_open("memory://", NULL, &store, &err) != RL_OK ||
      rl_config_set(cfg, "algorithm", "gcra", &err) != RL_OK ||
      rl_config_set(cfg, "limit", "5/s", &err) != RL_OK ||
      rl_limiter_new(store, cfg, &limiter, &err) != RL_OK) {
    fprintf(stderr, "%s: %s\n", rl_status_name(rl_error_status(err)), rl_error_message(err));
    return 1;
  }
  rl_config_free(cfg);
  for (int i = 0; i < 7; i++) {
    rl_request req = {.version = RL_REQUEST_VERSION, .key = "user:42", .key_len = 7, .cost = 1};
    rl_decision d = {.version = RL_DECISION_VERSION};
    rl_limiter_acquire(limiter, &req, &d, NULL);
    printf("request %d: %s, remaining %lld, retry after %lld us\n", i + 1,
           d.allowed ? "allowed" : "denied", (long long)d.remaining, (long long)d.retry_after_us);
  }
  rl_limiter_free(limiter);
  rl_store_free(store);
  return 0;
}
