/* Compiled alone by ctest (as C99 and as C++): rl.h must need nothing else. */
#include <rl/rl.h>

int main(void) {
  rl_request request = {RL_REQUEST_VERSION, "k", 1, 1};
  rl_decision decision = {RL_DECISION_VERSION, 0, 0, 0, 0, 0, RL_SOURCE_STORE};
  (void)request;
  (void)decision;
  return rl_status_name(RL_OK) != 0 ? 0 : 1;
}
