/* Compiled alone by ctest (as C99 and as C++): rl.h must need nothing else. */
#include <rl/rl.h>

int main(void) {
  rl_request request = RL_REQUEST_INIT;
  rl_decision decision = RL_DECISION_INIT;
  rl_store_info info = RL_STORE_INFO_INIT;
  request.key = "k";
  request.key_len = 1;
  request.cost = 1;
  (void)request;
  (void)decision;
  (void)info;
  return rl_status_name(RL_OK) != 0 ? 0 : 1;
}
