/* native_support.c: what rl.native needs beside SWIG's mapping of rl.h.
 *
 * native.i wraps rl.h itself; its typemaps turn Python values into rl's C
 * types and back with the helpers of the first part below. The second part
 * is the module's own functions (SWIG wraps them with those typemaps): what
 * SWIG cannot express, namely a completion queue per event loop that settles
 * asyncio futures from rl's thread, the package's Decision objects built
 * field by field, a blocking reset with a deadline, and freeing a store from
 * one of rl's own threads. */
#ifndef RL_PYTHON_NATIVE_SUPPORT_H
#define RL_PYTHON_NATIVE_SUPPORT_H

#ifndef SWIG
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

#include "rl/rl.h"

/* ---- for native.i's typemaps ---- */

/* Sets the Python error for a failed call: the exception the error factory
 * (set_error_factory) builds from (status, message). */
void rl_py_raise(int status, const char* message);
/* Raises TypeError "<what>: must be <expected>, not <obj's type name>". */
void rl_py_raise_wrong_type(const char* what, const char* expected, PyObject* obj);
/* A key: str (its UTF-8 bytes) or bytes, borrowed from obj. 0 and a Python
 * error when it is neither; librl judges its length. */
int rl_py_key_from(PyObject* obj, const char** key, size_t* len);
/* (key, cost, timeout_us) into *req, its key borrowed from the tuple. */
int rl_py_request_from(PyObject* obj, rl_request* req);

/* A batch: a tuple copy of the sequence (so that no other thread can drop
 * its keys while the GIL is released), the requests borrowing from it and
 * room for their decisions (and, for rl_limiter_acquire_batch_each, for
 * their statuses and errors). */
typedef struct rl_py_batch {
  PyObject* items;
  rl_request* requests;
  rl_decision* decisions;
  rl_status* statuses;
  rl_error** errors;
  size_t count;
} rl_py_batch;
/* 0 and a Python error for what is not a sequence of requests; what was
 * made is freed by rl_py_batch_free either way (the errors too). */
int rl_py_batch_from(PyObject* obj, rl_py_batch* b);
/* Room for statuses and errors; 0 and a Python error when out of memory. */
int rl_py_batch_each_room(rl_py_batch* b);
void rl_py_batch_free(rl_py_batch* b);
/* A list with each request's Decision, or its exception in its place. */
PyObject* rl_py_result_list(const rl_py_batch* b);

/* The package's Decision for d (see set_decision_type), a list of n. */
PyObject* rl_py_decision(const rl_decision* d);
PyObject* rl_py_decision_list(const rl_decision* d, size_t n);

/* The capsule that holds a wait of acquire_wait_async, freeing it with the
 * Python object (rl_wait_free); NULL (and the wait freed) when out of memory. */
PyObject* rl_py_wait_capsule(rl_wait* wait);
/* The wait of such a capsule; NULL and a Python error for anything else. */
rl_wait* rl_py_wait_of(PyObject* capsule);

/* Looks up what the running Python calls Py_IsFinalizing (from %init). */
void rl_py_support_init(void);
#endif /* SWIG */

/* ---- the module's own functions, wrapped by SWIG ---- */

/* A completion queue, one per event loop. */
typedef struct rl_py_queue rl_py_queue;

/* Installs the callable that turns (status, message) into an exception. */
void set_error_factory(PyObject* factory);
/* Makes every decision an instance of cls, built field by field: cls must
 * have exactly the slots named in fields (8 names, in the order allowed,
 * limit, remaining, retry_after, reset_after, limit_index, source,
 * suppression_factor), each an object slot; sources maps rl_source values
 * to their objects. Raises TypeError (and changes nothing) otherwise. */
PyObject* set_decision_type(PyObject* cls, PyObject* fields, PyObject* sources);

/* Closes and frees store. From a completion (a garbage collection that ran
 * on rl's thread while it woke a loop) rl_store_free would wait for itself
 * (rl.h: rl_store_close must not run inside a completion callback, and
 * librl has no deferred free): another thread frees it then. */
void store_free(rl_store* store);

/* A completion queue for one event loop: rl's thread queues each result
 * without the GIL, and only the push that finds the queue idle takes the
 * GIL, to call wake(). */
rl_py_queue* queue_new(void);
/* wake(): called with the GIL on rl's thread when a completion finds q idle;
 * it must schedule queue_drain(q) on the loop (and raise if it cannot). */
void queue_set_wake(rl_py_queue* q, PyObject* wake);
/* The owner lets go of q; it is freed when its last call has completed. */
void queue_release(rl_py_queue* q);
/* Settles the futures of every completion queued on q, in order. On the
 * loop's thread. */
void queue_drain(rl_py_queue* q);

/* rl_limiter_call_async(op) waited for without the GIL: None, or raises its
 * failure (reset with a deadline: rl_limiter_reset takes no request). */
PyObject* call_blocking(rl_limiter* limiter, int op, const rl_request* request);
/* rl_limiter_call_async: fut gets the Decision (None for RL_OP_RESET) or
 * the exception through q. Raises, and leaves fut alone, when the call
 * does not start. */
rl_status call_async(rl_limiter* limiter, int op, const rl_request* request, rl_py_queue* q,
                     PyObject* fut, rl_error** err);
/* rl_limiter_acquire_wait_start, completing fut as call_async does; returns
 * the wait, for rl_wait_cancel. */
rl_status acquire_wait_async(rl_limiter* limiter, const rl_request* request, int64_t timeout_us,
                             rl_py_queue* q, PyObject* fut, rl_wait** out, rl_error** err);
/* rl_limiter_acquire_batch_async_versioned: fut gets the list of Decisions. */
rl_status acquire_batch_async(rl_limiter* limiter, const rl_request* requests, size_t count,
                              rl_py_queue* q, PyObject* fut, rl_error** err);
/* rl_limiter_acquire_batch_each_async: fut gets the list that
 * rl_limiter_acquire_batch_each returns. */
rl_status acquire_batch_each_async(rl_limiter* limiter, const rl_request* requests, size_t count,
                                   rl_py_queue* q, PyObject* fut, rl_error** err);

#endif /* RL_PYTHON_NATIVE_SUPPORT_H */
