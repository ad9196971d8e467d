'use strict';
// The names of one of librl's tables (rl_status_name, rl_source_name,
// rl_breaker_state_name, rl_header_name), indexed by value: the native
// name function is called from 0 until it gives null.
function namesOf(nameOf) {
  const names = [];
  for (let value = 0, name; (name = nameOf(value)) !== null; value++) names.push(name);
  return names;
}

module.exports = { namesOf };
