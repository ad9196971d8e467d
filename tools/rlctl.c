/* rlctl: look at and change rate-limit state from a shell.
 *
 *   rlctl check URL KEY [COST] [SETTING=VALUE...]   acquire and print the decision
 *   rlctl peek  URL KEY [COST] [SETTING=VALUE...]   the decision, recording nothing
 *   rlctl reset URL KEY [SETTING=VALUE...]          forget the key's state
 *   rlctl info  URL                                 the store, and what decides in Redis
 *   rlctl settings                                  every setting, with its meaning
 *
 * The limiter settings must match the service's limiter (algorithm, limit,
 * burst, name), for example:
 *   rlctl peek redis://127.0.0.1:6379 user:42 algorithm=gcra limit=100/1m name=api
 * Exit status: 0 allowed (or done), 1 denied, 2 usage or error. */
#include <rl/rl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: rlctl check|peek URL KEY [COST] [SETTING=VALUE...]\n"
    "       rlctl reset URL KEY [SETTING=VALUE...]\n"
    "       rlctl info URL\n"
    "       rlctl settings\n"
    "       rlctl --help\n";

static const char help_text[] =
    "\n"
    "  check     acquire COST (default 1) for KEY and print the decision\n"
    "  peek      the decision check would give, recording nothing\n"
    "  reset     forget KEY's state\n"
    "  info      the store's scheme, URL (password hidden) and what decides\n"
    "            in Redis (script_mode), after one peek on a throwaway key\n"
    "  settings  every setting, with its meaning\n"
    "\n"
    "URL is memory://, redis://[user:pass@]host:port[/db], rediss://...,\n"
    "redis+sentinel://host:port,.../master or redis+cluster://host:port,...,\n"
    "with store settings as ?query.\n"
    "The SETTING=VALUE pairs must match the service's limiter (algorithm,\n"
    "limit, burst, name), for example:\n"
    "  rlctl peek redis://127.0.0.1:6379 user:42 algorithm=gcra limit=100/1m name=api\n"
    "Exit status: 0 allowed (or done), 1 denied, 2 usage or error.\n"
    "See rlctl(1).\n";

static int usage(void) {
  fputs(usage_text, stderr);
  return 2;
}

static int help(void) {
  fputs(usage_text, stdout);
  fputs(help_text, stdout);
  return 0;
}

static int fail(rl_error* err) {
  fprintf(stderr, "rlctl: %s: %s\n", rl_status_name(rl_error_status(err)), rl_error_message(err));
  rl_error_free(err);
  return 2;
}

static int print_settings(void) {
  const char* description = NULL;
  const char* name;
  for (size_t i = 0; (name = rl_config_describe(i, &description)) != NULL; i++) {
    printf("%-24s %s\n", name, description);
  }
  return 0;
}

/* One peek on a key no service uses (it records nothing), so that the
 * store meets its node and knows what decides there; then what it is. */
static int print_info(const char* url) {
  rl_error* err = NULL;
  rl_config* cfg = rl_config_new();
  rl_store* store = NULL;
  rl_limiter* limiter = NULL;
  int rc = 2;
  if (rl_config_set(cfg, "limit", "1/1s", &err) != RL_OK) goto done;
  if (rl_config_set(cfg, "name", "rlctl-info", &err) != RL_OK) goto done;
  if (rl_store_open(url, NULL, &store, &err) != RL_OK) goto done;
  if (rl_limiter_new(store, cfg, &limiter, &err) != RL_OK) goto done;
  static const char key[] = "rlctl-info";
  rl_request request = {
      .version = RL_REQUEST_VERSION, .key = key, .key_len = sizeof key - 1, .cost = 1};
  rl_decision d = {.version = RL_DECISION_VERSION};
  if (rl_limiter_peek(limiter, &request, &d, &err) != RL_OK) goto done;
  rl_store_info info = RL_STORE_INFO_INIT;
  if (rl_store_describe(store, &info, &err) != RL_OK) goto done;
  printf("scheme       %s\n", info.scheme);
  printf("url          %s\n", rl_store_display_url(store));
  if (info.script_mode != NULL) {
    printf("script_mode  %s\n", info.script_mode);
    printf("lua_mode     %s\n", info.lua_mode);
    if (strcmp(info.script_mode, "auto") == 0) {
      printf("module_nodes %u\n", (unsigned)info.module_nodes);
      printf("lua_nodes    %u\n", (unsigned)info.lua_nodes);
    }
  }
  rc = 0;
done:
  if (err != NULL) rc = fail(err);
  rl_limiter_free(limiter);
  rl_store_free(store);
  rl_config_free(cfg);
  return rc;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "settings") == 0) return print_settings();
  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) return help();
  if (argc == 3 && strcmp(argv[1], "info") == 0) return print_info(argv[2]);
  if (argc < 4) return usage();
  const char* command = argv[1];
  const int is_reset = strcmp(command, "reset") == 0;
  const int is_peek = strcmp(command, "peek") == 0;
  if (!is_reset && !is_peek && strcmp(command, "check") != 0) return usage();

  int next = 4;
  long long cost = 1;
  if (!is_reset && next < argc && strchr(argv[next], '=') == NULL) {
    char* end = NULL;
    cost = strtoll(argv[next], &end, 10);
    if (*end != '\0') return usage();
    next++;
  }

  /* One exit path frees whatever was made, on success and on every error. */
  rl_error* err = NULL;
  rl_config* cfg = rl_config_new();
  rl_store* store = NULL;
  rl_limiter* limiter = NULL;
  int rc = 2;
  for (; next < argc; next++) {
    char* eq = strchr(argv[next], '=');
    if (eq == NULL) {
      rc = usage();
      goto done;
    }
    *eq = '\0';
    if (rl_config_set(cfg, argv[next], eq + 1, &err) != RL_OK) goto done;
  }
  if (rl_store_open(argv[2], NULL, &store, &err) != RL_OK) goto done;
  if (rl_limiter_new(store, cfg, &limiter, &err) != RL_OK) goto done;

  const char* key = argv[3];
  if (is_reset) {
    if (rl_limiter_reset(limiter, key, strlen(key), &err) != RL_OK) goto done;
    printf("reset %s\n", key);
    rc = 0;
  } else {
    rl_request request = {
        .version = RL_REQUEST_VERSION, .key = key, .key_len = strlen(key), .cost = cost};
    rl_decision d = {.version = RL_DECISION_VERSION};
    rl_status status = is_peek ? rl_limiter_peek(limiter, &request, &d, &err)
                               : rl_limiter_acquire(limiter, &request, &d, &err);
    if (status != RL_OK) goto done;
    printf("%s limit=%lld remaining=%lld retry_after_us=%lld reset_after_us=%lld\n",
           d.allowed ? "allowed" : "denied", (long long)d.limit, (long long)d.remaining,
           (long long)d.retry_after_us, (long long)d.reset_after_us);
    rc = d.allowed ? 0 : 1;
  }
done:
  if (err != NULL) rc = fail(err);
  rl_limiter_free(limiter);
  rl_store_free(store);
  rl_config_free(cfg);
  return rc;
}
