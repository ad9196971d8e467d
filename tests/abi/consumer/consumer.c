/* A program built against an installed rl: admits 3 of 4 requests. */
#include <rl/rl.h>
#include <stdio.h>

int main(void) {
  rl_store* store = NULL;
  rl_limiter* limiter = NULL;
  rl_error* err = NULL;
  rl_config* cfg = rl_config_new();
  if (rl_store_open("memory://?clock=manual", NULL, &store, &err) != RL_OK ||
      rl_config_set(cfg, "limit", "3/s", &err) != RL_OK ||
      rl_limiter_new(store, cfg, &limiter, &err) != RL_OK) {
    fprintf(stderr, "consumer: %s\n", rl_error_message(err));
    return 1;
  }
  int admitted = 0;
  for (int i = 0; i < 4; ++i) {
    rl_request request = {.version = RL_REQUEST_VERSION, .key = "user-1", .key_len = 6, .cost = 1};
    rl_decision decision = {.version = RL_DECISION_VERSION};
    if (rl_limiter_acquire(limiter, &request, &decision, &err) != RL_OK) return 1;
    admitted += decision.allowed;
  }
  printf("rl %s: admitted %d of 4\n", rl_version(), admitted);
  rl_limiter_free(limiter);
  rl_config_free(cfg);
  rl_store_free(store);
  return admitted == 3 ? 0 : 1;
}
