/* rl.native: the low-level module SWIG generates from rl.h.
 *
 * rl.h is wrapped as it is (%include below); typemaps turn Python values
 * into rl's C types and back:
 * - a key (`const char *key, size_t key_len`) is a str (its UTF-8 bytes) or
 *   bytes; anything else is TypeError;
 * - a request (`const rl_request *`) is a tuple (key, cost, timeout_us),
 *   a batch (`const rl_request *requests, size_t count`) a sequence of them;
 * - a decision (`rl_decision *` out) comes back as the package's
 *   rl.Decision (see set_decision_type), a batch as a list of them;
 * - `rl_error **err` is hidden: a failure raises the exception that the
 *   factory given to set_error_factory() builds from (status, message);
 * - out-parameters (handles, a wait, a limiter's limits, header values, a
 *   setting's description) come back as return values, a versioned struct
 *   (rl_store_info, rl_store_stats, rl_setting_info) as SWIG's proxy of it,
 *   initialised with its rl_*_init.
 * The blocking calls release the GIL. What SWIG cannot express (a completion
 * queue per event loop for the asynchronous calls, Decision objects built
 * field by field, ...) is plain C in native_support.c, declared in
 * native_support.h and wrapped here too. The package `rl` (rl/__init__.py)
 * is the API; this module is its plumbing. */
%module(package="rl", threads="1") native
%nothread;
%include <stdint.i>

%{
#define SWIG_FILE_WITH_INIT
#include "native_support.h"
%}

/* ---- errors: every rl_error **err is hidden and raised ---- */
%typemap(in, numinputs=0) rl_error** err (rl_error* temp = NULL) { $1 = &temp; }
%typemap(argout) rl_error** err {
  if (*$1) {
    Py_XDECREF($result);
    $result = NULL;
    rl_py_raise(rl_error_status(*$1), rl_error_message(*$1));
    rl_error_free(*$1);
    SWIG_fail;
  }
  if (PyErr_Occurred()) { /* a helper below failed before reaching librl */
    Py_XDECREF($result);
    $result = NULL;
    SWIG_fail;
  }
}
%typemap(out) rl_status {
  (void)$1; /* a failure is raised by the rl_error** typemap */
  $result = Py_None;
  Py_INCREF(Py_None);
}

/* ---- keys ---- */
%typemap(in) (const char* key, size_t key_len) {
  if (!rl_py_key_from($input, (const char**)&$1, &$2)) SWIG_fail;
}

/* ---- requests ---- */
%typemap(in) const rl_request* request (rl_request temp) {
  if (!rl_py_request_from($input, &temp)) SWIG_fail;
  $1 = &temp;
}
%typemap(in) (const rl_request* requests, size_t count) (rl_py_batch batch = {NULL, NULL, NULL, NULL, NULL, 0}) {
  /* on failure the freearg typemap below frees what was made */
  if (!rl_py_batch_from($input, &batch)) SWIG_fail;
  $1 = batch.requests;
  $2 = batch.count;
}
%typemap(freearg) (const rl_request* requests, size_t count) { rl_py_batch_free(&batch$argnum); }

/* ---- decisions ---- */
%typemap(in, numinputs=0) rl_decision* decision (rl_decision temp) {
  rl_decision init = RL_DECISION_INIT;
  temp = init;
  $1 = &temp;
}
%typemap(argout) rl_decision* decision {
  if (result == RL_OK) {
    Py_XDECREF($result);
    $result = rl_py_decision($1);
    if (!$result) SWIG_fail;
  }
}
/* The batch's decisions live in its rl_py_batch (arg 2's typemap). */
%typemap(in, numinputs=0) rl_decision* decisions "$1 = NULL;"
%typemap(check) rl_decision* decisions "$1 = batch2.decisions;"
%typemap(argout) rl_decision* decisions {
  if (result == RL_OK) {
    Py_XDECREF($result);
    $result = rl_py_decision_list($1, batch2.count);
    if (!$result) SWIG_fail;
  }
}

/* rl_limiter_acquire_batch_each: a list with each request's Decision, or its
 * exception in its place; the room for them is the batch's too. */
%typemap(in, numinputs=0) (rl_decision* decisions, rl_status* statuses, rl_error** errors) {
  $1 = NULL;
  $2 = NULL;
  $3 = NULL;
}
%typemap(check) (rl_decision* decisions, rl_status* statuses, rl_error** errors) {
  if (!rl_py_batch_each_room(&batch2)) SWIG_fail;
  $1 = batch2.decisions;
  $2 = batch2.statuses;
  $3 = batch2.errors;
}
%typemap(argout) (rl_decision* decisions, rl_status* statuses, rl_error** errors) {
  if (result == RL_OK) {
    Py_XDECREF($result);
    $result = rl_py_result_list(&batch2);
    if (!$result) SWIG_fail;
  }
}

/* ---- text that crosses as a C string: its length too, for rl_text_check ---- */
%typemap(in) (const char* text, size_t length) {
  Py_ssize_t n = 0;
  if (!PyUnicode_Check($input)) {
    rl_py_raise_wrong_type("text", "str", $input);
    SWIG_fail;
  }
  $1 = (char*)PyUnicode_AsUTF8AndSize($input, &n);
  if (!$1) SWIG_fail;
  $2 = (size_t)n;
}

/* ---- a wait's handle: a capsule that frees it with the Python object ---- */
%typemap(in, numinputs=0) rl_wait** out (rl_wait* temp = NULL) { $1 = &temp; }
%typemap(argout) rl_wait** out {
  if (result == RL_OK) {
    Py_XDECREF($result);
    $result = rl_py_wait_capsule(*$1);
    if (!$result) SWIG_fail;
  }
}
%typemap(in) rl_wait* wait {
  $1 = rl_py_wait_of($input);
  if (!$1) SWIG_fail;
}

/* ---- handles out of constructors ---- */
%typemap(in, numinputs=0) rl_store** out (rl_store* temp = NULL) { $1 = &temp; }
%typemap(argout) rl_store** out {
  if (result == RL_OK) {
    Py_XDECREF($result);
    $result = SWIG_NewPointerObj(*$1, SWIGTYPE_p_rl_store, 0);
  }
}
%typemap(in, numinputs=0) rl_limiter** out (rl_limiter* temp = NULL) { $1 = &temp; }
%typemap(argout) rl_limiter** out {
  if (result == RL_OK) {
    Py_XDECREF($result);
    $result = SWIG_NewPointerObj(*$1, SWIGTYPE_p_rl_limiter, 0);
  }
}

/* ---- the limits of a limiter: a list of (limit, window_us, burst) ---- */
%typemap(in, numinputs=0) (rl_limit_info* out, size_t capacity) (rl_limit_info temp[8]) {
  $1 = temp;
  $2 = 8; /* rl_limiter_limits: 1 to 8 */
}
%typemap(argout) (rl_limit_info* out, size_t capacity) {
  size_t n = result < $2 ? result : $2;
  PyObject* list = PyList_New((Py_ssize_t)n);
  if (!list) SWIG_fail;
  for (size_t i = 0; i < n; i++) {
    PyObject* item = Py_BuildValue("(LLL)", (long long)$1[i].limit, (long long)$1[i].window_us,
                                   (long long)$1[i].burst);
    if (!item) {
      Py_DECREF(list);
      SWIG_fail;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  Py_XDECREF($result);
  $result = list;
}

/* ---- rl_headers_render(name, limits, decision) -> [RateLimit-Policy,
 *      RateLimit, Retry-After], each a str or None where it is not sent;
 *      the limits as rl_limiter_limits gives them, the decision a tuple
 *      (allowed, remaining, retry_after_us, reset_after_us, limit_index,
 *      source) ---- */
%typemap(in) (const rl_limit_info* limits, size_t limit_count) (rl_limit_info temp[8]) {
  Py_ssize_t n = PySequence_Size($input);
  if (n < 0) SWIG_fail;
  if (n > 8) n = 8;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject* item = PySequence_GetItem($input, i);
    long long limit = 0, window_us = 0, burst = 0;
    const int ok = item && PyArg_ParseTuple(item, "LLL", &limit, &window_us, &burst);
    Py_XDECREF(item);
    if (!ok) SWIG_fail;
    temp[i].limit = limit;
    temp[i].window_us = window_us;
    temp[i].burst = burst;
  }
  $1 = temp;
  $2 = (size_t)n;
}
%typemap(in) const rl_decision* decision (rl_decision temp) {
  rl_decision d = RL_DECISION_INIT;
  int allowed = 0, limit_index = 0, source = 0;
  long long remaining = 0, retry_after_us = 0, reset_after_us = 0;
  if (!PyArg_ParseTuple($input, "iLLLii", &allowed, &remaining, &retry_after_us, &reset_after_us,
                        &limit_index, &source)) {
    SWIG_fail;
  }
  d.allowed = allowed ? 1 : 0;
  d.remaining = remaining;
  d.retry_after_us = retry_after_us;
  d.reset_after_us = reset_after_us;
  d.limit_index = limit_index;
  d.source = source;
  temp = d;
  $1 = &temp;
}
%typemap(in, numinputs=0) (char** values, size_t count) (char* temp[RL_HEADER_COUNT]) {
  for (int i = 0; i < RL_HEADER_COUNT; i++) temp[i] = NULL;
  $1 = temp;
  $2 = RL_HEADER_COUNT;
}
%typemap(argout) (char** values, size_t count) {
  if (result == RL_OK) {
    PyObject* list = PyList_New(RL_HEADER_COUNT);
    if (!list) SWIG_fail;
    for (int i = 0; i < RL_HEADER_COUNT; i++) {
      PyObject* v = $1[i] ? PyUnicode_FromString($1[i]) : Py_None;
      if (!v) {
        Py_DECREF(list);
        SWIG_fail;
      }
      if (v == Py_None) Py_INCREF(v);
      PyList_SetItem(list, i, v);
    }
    Py_XDECREF($result);
    $result = list;
  }
}
%typemap(freearg) (char** values, size_t count) {
  for (int i = 0; i < RL_HEADER_COUNT; i++) rl_string_free(temp$argnum[i]);
}
/* For rl's shared header table test (tests/test_http_headers_table.py):
 * the decision field by field. */
%pythoncode %{
def headers_render(name, limits, allowed, remaining, retry_after_us, reset_after_us, limit_index, source):
    return rl_headers_render(
        name, limits, (allowed, remaining, retry_after_us, reset_after_us, limit_index, source)
    )
%}

/* ---- a store's statistics: rl_store_stats, its counter arrays tuples ---- */
%typemap(out) uint64_t [ANY] {
  $result = PyTuple_New($1_dim0);
  if (!$result) SWIG_fail;
  for (Py_ssize_t i = 0; i < $1_dim0; i++) {
    PyObject* v = PyLong_FromUnsignedLongLong($1[i]);
    if (!v) {
      Py_DECREF($result);
      $result = NULL;
      SWIG_fail;
    }
    PyTuple_SetItem($result, i, v);
  }
}

/* ---- rl_config_describe: (name, description), None past the last ---- */
%typemap(in, numinputs=0) const char** description (const char* temp = NULL) { $1 = ($1_ltype)&temp; }
%typemap(argout) const char** description {
  if (result) {
    Py_XDECREF($result);
    $result = Py_BuildValue("(ss)", result, *$1 ? *$1 : "");
    if (!$result) SWIG_fail;
  }
}

/* ---- strings rl allocates: a str, the C string freed ---- */
%newobject rl_store_metrics;
%typemap(newfree) char* "rl_string_free($1);";

/* ---- what the package does not use from rl.h, or uses through
 *      native_support.c ---- */
%ignore rl_request;
%ignore rl_decision;
%ignore rl_limit_info;
%ignore rl_error_status;
%ignore rl_error_message;
%ignore rl_error_free;
%ignore rl_store_free;
%ignore rl_store_format_metrics;
%ignore rl_string_free;
%ignore rl_limiter_call_async;
%ignore rl_limiter_acquire_async;
%ignore rl_limiter_acquire_wait_async;
%ignore rl_limiter_acquire_wait_start;
%ignore rl_wait_free;
%ignore rl_request_init;
%ignore rl_decision_init;
%ignore rl_limiter_acquire_batch_async;
%ignore rl_limiter_acquire_batch_each_async;

/* The calls that may wait for I/O or for other threads run without the GIL. */
%thread rl_store_open;
%thread rl_store_close;
%thread rl_limiter_new;
%thread rl_limiter_acquire;
%thread rl_limiter_peek;
%thread rl_limiter_refund;
%thread rl_limiter_reset;
%thread rl_limiter_acquire_wait;
%thread rl_limiter_acquire_batch;
%thread rl_limiter_acquire_batch_each;

#define RL_API
/* rl fills the structs the package passes it (their version set by their
 * rl_*_init); Python only reads their fields. */
%immutable;
%include "rl/rl.h"
%mutable;
%include "native_support.h"

%init %{
  rl_py_support_init();
%}
