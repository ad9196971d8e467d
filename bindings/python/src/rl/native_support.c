/* What rl.native needs beside SWIG's mapping of rl.h (native_support.h
 * says what is here and why). Built for Python's limited API
 * (Py_LIMITED_API, CMakeLists.txt): one abi3 build serves every Python from
 * 3.10 on, so nothing here reaches into CPython's private structures. */
#define PY_SSIZE_T_CLEAN
#include "native_support.h"

/* The limited API has these as functions only: the names SWIG's wrapper
 * gives them too (pyhead.swg), each used on a new tuple or list. */
#ifdef Py_LIMITED_API
#define PyTuple_GET_ITEM PyTuple_GetItem
#define PyTuple_SET_ITEM PyTuple_SetItem
#define PyTuple_GET_SIZE PyTuple_Size
#define PyList_SET_ITEM PyList_SetItem
#endif

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* callable(status: int, message: str) -> exception instance */
static PyObject* rl_error_factory = NULL;
/* Set on rl's threads while they run a completion: see store_free. */
static __thread int rl_in_completion = 0;

static PyObject* rl_make_exception(int status, const char* message) {
  PyObject* text = PyUnicode_DecodeUTF8(message, (Py_ssize_t)strlen(message), "replace");
  if (!text) return NULL;
  PyObject* exc = NULL;
  if (rl_error_factory) {
    exc = PyObject_CallFunction(rl_error_factory, "iO", status, text);
  } else {
    exc = PyObject_CallFunction(PyExc_RuntimeError, "O", text);
  }
  Py_DECREF(text);
  return exc;
}

void rl_py_raise(int status, const char* message) {
  PyObject* exc = rl_make_exception(status, message);
  if (exc) {
    PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
}

/* The package's Decision class (a frozen dataclass with slots), the offsets
 * of its eight fields, and the Source member of each rl_source: decisions
 * are built here, without running the dataclass's __init__ (which costs
 * more than librl's decision on memory://). See set_decision_type. */
#define RL_DECISION_FIELDS 8
static PyTypeObject* rl_decision_type = NULL;
static allocfunc rl_decision_alloc = NULL; /* its tp_alloc */
static Py_ssize_t rl_decision_offsets[RL_DECISION_FIELDS];
static PyObject* rl_sources = NULL; /* tuple: rl_source -> Source */

/* Before set_decision_type: (allowed, limit, remaining, retry_after_us,
 * reset_after_us, source, limit_index, suppression_factor). */
static PyObject* rl_decision_tuple(const rl_decision* d) {
  return Py_BuildValue("(NLLLLiid)", PyBool_FromLong(d->allowed), (long long)d->limit,
                       (long long)d->remaining, (long long)d->retry_after_us,
                       (long long)d->reset_after_us, (int)d->source, (int)d->limit_index,
                       d->suppression_factor);
}

/* A Decision: allowed, limit, remaining, retry_after (s; -1.0 never),
 * reset_after (s), limit_index, source, suppression_factor, in the
 * dataclass's field order. */
PyObject* rl_py_decision(const rl_decision* d) {
  if (!rl_decision_type) return rl_decision_tuple(d);
  Py_ssize_t n_sources = PyTuple_GET_SIZE(rl_sources);
  PyObject* source =
      PyTuple_GET_ITEM(rl_sources, (d->source >= 0 && d->source < n_sources) ? d->source : 0);
  Py_INCREF(source);
  PyObject* values[RL_DECISION_FIELDS] = {
      PyBool_FromLong(d->allowed),
      PyLong_FromLongLong((long long)d->limit),
      PyLong_FromLongLong((long long)d->remaining),
      PyFloat_FromDouble(d->retry_after_us < 0 ? -1.0 : (double)d->retry_after_us / 1e6),
      PyFloat_FromDouble((double)d->reset_after_us / 1e6),
      PyLong_FromLong((long)d->limit_index),
      source,
      PyFloat_FromDouble(d->suppression_factor)};
  PyObject* obj = NULL;
  int ok = 1;
  for (int i = 0; i < RL_DECISION_FIELDS; i++) ok = ok && values[i] != NULL;
  if (ok) obj = rl_decision_alloc(rl_decision_type, 0);
  if (!obj) {
    for (int i = 0; i < RL_DECISION_FIELDS; i++) Py_XDECREF(values[i]);
    return NULL;
  }
  for (int i = 0; i < RL_DECISION_FIELDS; i++)
    *(PyObject**)((char*)obj + rl_decision_offsets[i]) = values[i];
  return obj;
}

void rl_py_raise_wrong_type(const char* what, const char* expected, PyObject* obj) {
  PyObject* name = PyObject_GetAttrString((PyObject*)Py_TYPE(obj), "__name__");
  if (!name) return;
  PyErr_Format(PyExc_TypeError, "%s: must be %s, not %.64U", what, expected, name);
  Py_DECREF(name);
}

int rl_py_key_from(PyObject* obj, const char** key, size_t* len) {
  Py_ssize_t n = 0;
  if (PyUnicode_Check(obj)) {
    const char* p = PyUnicode_AsUTF8AndSize(obj, &n);
    if (!p) {
      PyErr_Clear();
      rl_py_raise(RL_E_INVALID_ARG,
                  "key: is not valid Unicode text (a lone surrogate); pass bytes");
      return 0;
    }
    *key = p;
  } else if (PyBytes_Check(obj)) {
    char* p = NULL;
    if (PyBytes_AsStringAndSize(obj, &p, &n) < 0) return 0;
    *key = p;
  } else {
    rl_py_raise_wrong_type("key", "str or bytes", obj);
    return 0;
  }
  *len = (size_t)n;
  return 1;
}

/* An int64 named what; 0 and a Python error when obj is not one. */
static int rl_int64_from(PyObject* obj, const char* what, int64_t* out) {
  if (!PyLong_Check(obj) || PyBool_Check(obj)) {
    rl_py_raise_wrong_type(what, "int", obj);
    return 0;
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (overflow) {
    char message[96];
    snprintf(message, sizeof message, "%s: is out of the int64 range", what);
    rl_py_raise(RL_E_INVALID_ARG, message);
    return 0;
  }
  if (v == -1 && PyErr_Occurred()) return 0;
  *out = (int64_t)v;
  return 1;
}

int rl_py_request_from(PyObject* obj, rl_request* req) {
  if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 3) {
    PyErr_SetString(PyExc_TypeError, "request: must be a tuple (key, cost, timeout_us)");
    return 0;
  }
  rl_request r = RL_REQUEST_INIT;
  if (!rl_py_key_from(PyTuple_GET_ITEM(obj, 0), &r.key, &r.key_len)) return 0;
  if (!rl_int64_from(PyTuple_GET_ITEM(obj, 1), "cost", &r.cost)) return 0;
  if (!rl_int64_from(PyTuple_GET_ITEM(obj, 2), "timeout_us", &r.timeout_us)) return 0;
  *req = r;
  return 1;
}

int rl_py_batch_from(PyObject* obj, rl_py_batch* b) {
  memset(b, 0, sizeof *b);
  if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
    PyErr_SetString(PyExc_TypeError, "requests: must be a sequence of requests, not one key");
    return 0;
  }
  b->items = PySequence_Tuple(obj);
  if (!b->items) return 0;
  size_t n = (size_t)PyTuple_GET_SIZE(b->items);
  b->count = n;
  if (n == 0) return 1;           /* librl names the empty batch */
  if (n > RL_MAX_BATCH) return 1; /* and the one too large: nothing is read */
  b->requests = (rl_request*)calloc(n, sizeof(rl_request));
  b->decisions = (rl_decision*)calloc(n, sizeof(rl_decision));
  if (!b->requests || !b->decisions) {
    PyErr_NoMemory();
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    if (!rl_py_request_from(PyTuple_GET_ITEM(b->items, i), &b->requests[i])) return 0;
    rl_decision d = RL_DECISION_INIT;
    b->decisions[i] = d;
  }
  return 1;
}

int rl_py_batch_each_room(rl_py_batch* b) {
  if (!b->requests) return 1; /* a batch librl refuses before reading it */
  b->statuses = (rl_status*)calloc(b->count, sizeof(rl_status));
  b->errors = (rl_error**)calloc(b->count, sizeof(rl_error*));
  if (!b->statuses || !b->errors) {
    PyErr_NoMemory();
    return 0;
  }
  return 1;
}

void rl_py_batch_free(rl_py_batch* b) {
  Py_XDECREF(b->items);
  free(b->requests);
  free(b->decisions);
  free(b->statuses);
  if (b->errors) {
    for (size_t i = 0; i < b->count; i++) rl_error_free(b->errors[i]);
  }
  free(b->errors);
}

PyObject* rl_py_decision_list(const rl_decision* d, size_t n) {
  PyObject* list = PyList_New((Py_ssize_t)n);
  if (!list) return NULL;
  for (size_t i = 0; i < n; i++) {
    PyObject* t = rl_py_decision(&d[i]);
    if (!t) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, t);
  }
  return list;
}

/* A batch's results, each request's own: its Decision, or the exception
 * built from its status and message (from messages, else from errors). */
static PyObject* rl_result_list(const rl_decision* d, const rl_status* statuses,
                                const char* const* messages, rl_error* const* errors, size_t n) {
  PyObject* list = PyList_New((Py_ssize_t)n);
  if (!list) return NULL;
  for (size_t i = 0; i < n; i++) {
    PyObject* t = statuses[i] == RL_OK
                      ? rl_py_decision(&d[i])
                      : rl_make_exception(statuses[i], messages ? (messages[i] ? messages[i] : "")
                                                                : rl_error_message(errors[i]));
    if (!t) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, t);
  }
  return list;
}

PyObject* rl_py_result_list(const rl_py_batch* b) {
  return rl_result_list(b->decisions, b->statuses, NULL, b->errors, b->count);
}

/* Py_IsFinalizing (3.13+; _Py_IsFinalizing before) is outside the limited
 * API, and one abi3 module meets both names: the one this Python has is
 * looked up when the module loads (rl_py_support_init, from %init). */
static int (*rl_is_finalizing)(void) = NULL;

void rl_py_support_init(void) {
  rl_is_finalizing = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsFinalizing");
  if (!rl_is_finalizing) rl_is_finalizing = (int (*)(void))dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
}

static int rl_interpreter_gone(void) {
  return !Py_IsInitialized() || (rl_is_finalizing && rl_is_finalizing());
}

/* ---- completions: rl's thread -> the event loop ----
 * An asynchronous call carries an entry: its future (a strong reference,
 * taken with the GIL when the call starts) and room for its result. rl's
 * thread fills the entry and pushes it onto its loop's queue under a mutex,
 * without the GIL; only the push that finds the queue idle takes the GIL,
 * to call the queue's wake() (which schedules queue_drain on the loop with
 * call_soon_threadsafe). queue_drain, on the loop's thread, settles the
 * futures in order and drops them there: a burst of completions costs one
 * wake-up, and nothing a future holds is released on rl's thread. A future
 * already done (cancelled) is left as it is: each entry is still completed
 * exactly once, as rl completes each call exactly once. */

typedef struct rl_py_entry {
  struct rl_py_entry* next;
  rl_py_queue* queue;
  PyObject* fut;
  rl_status status;
  char* message; /* on failure */
  int batch;     /* 1: decisions[count] is the payload, as a list; 2: with
                    statuses and messages, one result per request */
  size_t count;
  rl_decision* decisions;
  rl_status* statuses; /* batch 2 */
  char** messages;     /* batch 2: NULL for a request that did not fail */
  rl_decision one;
} rl_py_entry;

struct rl_py_queue {
  pthread_mutex_t mu;
  rl_py_entry* head;
  rl_py_entry* tail;
  int scheduled; /* a drain is on its way: pushes need not wake */
  long refs;     /* the owner's, plus one per entry in flight (atomic) */
  PyObject* wake;
};

static void rl_queue_unref(rl_py_queue* q) { /* with the GIL */
  if (__atomic_sub_fetch(&q->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    Py_XDECREF(q->wake);
    pthread_mutex_destroy(&q->mu);
    free(q);
  }
}

static void rl_entry_free(rl_py_entry* e) { /* with the GIL */
  rl_py_queue* q = e->queue;
  Py_XDECREF(e->fut);
  free(e->message);
  free(e->decisions);
  if (e->messages) {
    for (size_t i = 0; i < e->count; i++) free(e->messages[i]);
  }
  free(e->messages);
  free(e->statuses);
  free(e);
  rl_queue_unref(q);
}

/* Drops every queued entry unsettled (their loop is gone). With the GIL. */
static void rl_queue_discard(rl_py_queue* q) {
  pthread_mutex_lock(&q->mu);
  rl_py_entry* e = q->head;
  q->head = q->tail = NULL;
  q->scheduled = 0;
  pthread_mutex_unlock(&q->mu);
  while (e) {
    rl_py_entry* next = e->next;
    rl_entry_free(e);
    e = next;
  }
}

static void rl_enqueue(rl_py_entry* e);

static void rl_complete(rl_py_entry* e, rl_status status, const rl_decision* decisions,
                        size_t count, const rl_error* err) {
  e->status = status;
  if (status != RL_OK) {
    const char* m = rl_error_message(err);
    e->message = strdup(m ? m : "");
  } else if (e->batch) {
    e->count = count;
    e->decisions = (rl_decision*)malloc((count ? count : 1) * sizeof(rl_decision));
    if (e->decisions) memcpy(e->decisions, decisions, count * sizeof(rl_decision));
  } else if (decisions) {
    e->one = *decisions;
  }
  rl_enqueue(e);
}

/* A batch with a result per request: copied out while the callback runs. A
 * copy that fails leaves decisions NULL, which settles as out of memory. */
static void rl_complete_each(rl_py_entry* e, const rl_decision* decisions,
                             const rl_status* statuses, const rl_error* const* errors,
                             size_t count) {
  e->status = RL_OK;
  e->count = count;
  size_t n = count ? count : 1;
  e->decisions = (rl_decision*)malloc(n * sizeof(rl_decision));
  e->statuses = (rl_status*)malloc(n * sizeof(rl_status));
  e->messages = (char**)calloc(n, sizeof(char*));
  if (e->decisions && e->statuses && e->messages) {
    memcpy(e->decisions, decisions, count * sizeof(rl_decision));
    memcpy(e->statuses, statuses, count * sizeof(rl_status));
    for (size_t i = 0; i < count; i++) {
      if (errors[i]) e->messages[i] = strdup(rl_error_message(errors[i]));
    }
  } else {
    free(e->decisions);
    e->decisions = NULL;
  }
  rl_enqueue(e);
}

/* Hands e to its loop's queue, waking the loop when the queue was idle. */
static void rl_enqueue(rl_py_entry* e) {
  rl_py_queue* q = e->queue;
  pthread_mutex_lock(&q->mu);
  e->next = NULL;
  if (q->tail) {
    q->tail->next = e;
  } else {
    q->head = e;
  }
  q->tail = e;
  int wake = !q->scheduled;
  q->scheduled = 1;
  pthread_mutex_unlock(&q->mu);
  if (!wake || rl_interpreter_gone()) return; /* a drain is coming, or nothing may run */
  PyGILState_STATE gil = PyGILState_Ensure();
  rl_in_completion = 1;
  PyObject* r = q->wake ? PyObject_CallNoArgs(q->wake) : NULL;
  if (r) {
    Py_DECREF(r);
  } else {
    PyErr_Clear(); /* the loop is closed or gone: nobody awaits these futures */
    rl_queue_discard(q);
  }
  rl_in_completion = 0;
  PyGILState_Release(gil);
}

static void rl_on_complete(void* user_data, rl_status status, const rl_decision* decision,
                           const rl_error* err) {
  rl_complete((rl_py_entry*)user_data, status, decision, 1, err);
}

static void rl_on_batch_complete(void* user_data, rl_status status, const rl_decision* decisions,
                                 size_t count, const rl_error* err) {
  rl_complete((rl_py_entry*)user_data, status, decisions, count, err);
}

static void rl_on_batch_each_complete(void* user_data, const rl_decision* decisions,
                                      const rl_status* statuses, const rl_error* const* errors,
                                      size_t count) {
  rl_complete_each((rl_py_entry*)user_data, decisions, statuses, errors, count);
}

/* A new entry for a call about to start on q (with the GIL). */
static rl_py_entry* rl_entry_new(rl_py_queue* q, PyObject* fut, int batch) {
  if (!q) {
    PyErr_SetString(PyExc_TypeError, "queue: is NULL");
    return NULL;
  }
  rl_py_entry* e = (rl_py_entry*)calloc(1, sizeof *e);
  if (!e) {
    PyErr_NoMemory();
    return NULL;
  }
  e->queue = q;
  e->fut = fut;
  e->batch = batch;
  Py_INCREF(fut);
  __atomic_add_fetch(&q->refs, 1, __ATOMIC_ACQ_REL);
  return e;
}

/* The status of a call that did not start: its entry goes at once. */
static rl_status rl_started(rl_status s, rl_py_entry* e) {
  if (s != RL_OK) rl_entry_free(e);
  return s;
}

static PyObject* rl_settle(PyObject* fut, rl_py_entry* e) {
  PyObject* done = PyObject_CallMethod(fut, "done", NULL);
  if (!done) return NULL;
  int is_done = PyObject_IsTrue(done);
  Py_DECREF(done);
  if (is_done) Py_RETURN_NONE; /* cancelled while rl worked */
  PyObject* payload;
  const char* method = "set_result";
  if (e->status != RL_OK) {
    payload = rl_make_exception(e->status, e->message ? e->message : "");
    method = "set_exception";
  } else if (e->batch == 2) {
    payload = e->decisions ? rl_result_list(e->decisions, e->statuses,
                                            (const char* const*)e->messages, NULL, e->count)
                           : PyErr_NoMemory();
  } else if (e->batch) {
    payload = e->decisions ? rl_py_decision_list(e->decisions, e->count) : PyErr_NoMemory();
  } else {
    payload = rl_py_decision(&e->one);
  }
  if (!payload) { /* out of memory building it: the future fails with that */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    if (!value) return NULL;
    payload = value;
    method = "set_exception";
  }
  PyObject* r = PyObject_CallMethod(fut, method, "O", payload);
  Py_DECREF(payload);
  return r;
}

/* A blocking call through rl_limiter_call_async, for what has no blocking
 * form with a request (reset with a per-call deadline): waits, without the
 * GIL, for its one completion. */
typedef struct rl_py_waiter {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done;
  rl_status status;
  char* message;
} rl_py_waiter;

static void rl_on_wait_complete(void* user_data, rl_status status, const rl_decision* decision,
                                const rl_error* err) {
  rl_py_waiter* w = (rl_py_waiter*)user_data;
  pthread_mutex_lock(&w->mu);
  w->status = status;
  if (status != RL_OK) {
    const char* m = rl_error_message(err);
    w->message = strdup(m ? m : "");
  }
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

static void rl_wait_capsule_free(PyObject* capsule) {
  rl_wait_free((rl_wait*)PyCapsule_GetPointer(capsule, "rl_wait"));
}

PyObject* rl_py_wait_capsule(rl_wait* wait) {
  PyObject* capsule = PyCapsule_New(wait, "rl_wait", rl_wait_capsule_free);
  if (!capsule) rl_wait_free(wait);
  return capsule;
}

rl_wait* rl_py_wait_of(PyObject* capsule) {
  return (rl_wait*)PyCapsule_GetPointer(capsule, "rl_wait");
}

static void* rl_free_store_thread(void* store) {
  rl_store_free((rl_store*)store);
  return NULL;
}

void set_error_factory(PyObject* factory) {
  Py_XINCREF(factory);
  Py_XDECREF(rl_error_factory);
  rl_error_factory = factory;
}

PyObject* set_decision_type(PyObject* cls, PyObject* fields, PyObject* sources) {
  if (!PyType_Check(cls) || !PyTuple_Check(fields) ||
      PyTuple_GET_SIZE(fields) != RL_DECISION_FIELDS || !PyTuple_Check(sources) ||
      PyTuple_GET_SIZE(sources) < 1) {
    PyErr_SetString(PyExc_TypeError, "set_decision_type(cls, 8 field names, sources tuple)");
    return NULL;
  }
  /* The limited API does not show a member descriptor's offset: each field
   * of a fresh instance is set to a marker of its own (its name) the way
   * object.__setattr__ does, through the slot's descriptor, and the marker
   * must then be found at exactly one pointer-sized place of the instance. */
  allocfunc alloc = (allocfunc)PyType_GetSlot((PyTypeObject*)cls, Py_tp_alloc);
  PyObject* size = PyObject_GetAttrString(cls, "__basicsize__");
  Py_ssize_t basicsize = size ? PyLong_AsSsize_t(size) : -1;
  Py_XDECREF(size);
  if (!alloc || basicsize < 0) return NULL;
  PyObject* probe = alloc((PyTypeObject*)cls, 0);
  if (!probe) return NULL;
  Py_ssize_t offsets[RL_DECISION_FIELDS];
  for (int i = 0; i < RL_DECISION_FIELDS; i++) {
    PyObject* name = PyTuple_GET_ITEM(fields, i);
    if (!name || PyObject_GenericSetAttr(probe, name, name) < 0) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "set_decision_type: field %d is not an object slot", i);
      Py_DECREF(probe);
      return NULL;
    }
    int found = 0;
    for (Py_ssize_t at = (Py_ssize_t)sizeof(PyObject);
         at + (Py_ssize_t)sizeof(PyObject*) <= basicsize; at += (Py_ssize_t)sizeof(PyObject*)) {
      if (*(PyObject**)((char*)probe + at) == name) {
        offsets[i] = at;
        found++;
      }
    }
    if (found != 1) {
      PyErr_Format(PyExc_TypeError, "set_decision_type: field %d is not an object slot", i);
      Py_DECREF(probe);
      return NULL;
    }
  }
  Py_DECREF(probe);
  memcpy(rl_decision_offsets, offsets, sizeof offsets);
  Py_INCREF(cls);
  Py_INCREF(sources);
  PyTypeObject* old_type = rl_decision_type;
  PyObject* old_sources = rl_sources;
  rl_decision_type = (PyTypeObject*)cls;
  rl_decision_alloc = alloc;
  rl_sources = sources;
  Py_XDECREF(old_type);
  Py_XDECREF(old_sources);
  Py_RETURN_NONE;
}

void store_free(rl_store* store) {
  if (!store) return;
  if (rl_in_completion) {
    pthread_t t;
    if (pthread_create(&t, NULL, rl_free_store_thread, store) == 0) pthread_detach(t);
    return; /* no thread: leak rather than deadlock */
  }
  PyThreadState* saved = PyEval_SaveThread();
  rl_store_free(store);
  PyEval_RestoreThread(saved);
}

rl_py_queue* queue_new(void) {
  rl_py_queue* q = (rl_py_queue*)calloc(1, sizeof *q);
  if (!q) {
    PyErr_NoMemory();
    return NULL;
  }
  pthread_mutex_init(&q->mu, NULL);
  q->refs = 1;
  return q;
}

void queue_set_wake(rl_py_queue* q, PyObject* wake) {
  Py_INCREF(wake);
  PyObject* old = q->wake;
  q->wake = wake;
  Py_XDECREF(old);
}

void queue_release(rl_py_queue* q) {
  if (!q) return;
  pthread_mutex_lock(&q->mu);
  PyObject* wake = q->wake;
  q->wake = NULL;
  pthread_mutex_unlock(&q->mu);
  Py_XDECREF(wake);
  rl_queue_unref(q);
}

/* An error settling one future (the loop being torn down) is reported as
 * unraisable; the others still settle. */
void queue_drain(rl_py_queue* q) {
  pthread_mutex_lock(&q->mu);
  rl_py_entry* e = q->head;
  q->head = q->tail = NULL;
  q->scheduled = 0;
  pthread_mutex_unlock(&q->mu);
  while (e) {
    rl_py_entry* next = e->next;
    PyObject* r = rl_settle(e->fut, e);
    if (r) {
      Py_DECREF(r);
    } else {
      PyErr_WriteUnraisable(e->fut);
    }
    rl_entry_free(e);
    e = next;
  }
}

PyObject* call_blocking(rl_limiter* limiter, int op, const rl_request* request) {
  rl_py_waiter w;
  memset(&w, 0, sizeof w);
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  rl_error* err = NULL;
  rl_status s;
  PyThreadState* saved = PyEval_SaveThread();
  s = rl_limiter_call_async(limiter, (rl_op)op, request, rl_on_wait_complete, &w, &err);
  if (s == RL_OK) {
    pthread_mutex_lock(&w.mu);
    while (!w.done) pthread_cond_wait(&w.cv, &w.mu);
    pthread_mutex_unlock(&w.mu);
  }
  PyEval_RestoreThread(saved);
  pthread_cond_destroy(&w.cv);
  pthread_mutex_destroy(&w.mu);
  if (s != RL_OK) {
    rl_py_raise(rl_error_status(err), rl_error_message(err));
    rl_error_free(err);
    return NULL;
  }
  if (w.status != RL_OK) {
    rl_py_raise(w.status, w.message ? w.message : "");
    free(w.message);
    return NULL;
  }
  Py_RETURN_NONE;
}

rl_status call_async(rl_limiter* limiter, int op, const rl_request* request, rl_py_queue* q,
                     PyObject* fut, rl_error** err) {
  rl_py_entry* e = rl_entry_new(q, fut, 0);
  if (!e) return RL_E_NO_MEMORY;
  return rl_started(rl_limiter_call_async(limiter, (rl_op)op, request, rl_on_complete, e, err), e);
}

rl_status acquire_wait_async(rl_limiter* limiter, const rl_request* request, int64_t timeout_us,
                             rl_py_queue* q, PyObject* fut, rl_wait** out, rl_error** err) {
  rl_py_entry* e = rl_entry_new(q, fut, 0);
  if (!e) return RL_E_NO_MEMORY;
  return rl_started(
      rl_limiter_acquire_wait_start(limiter, request, timeout_us, rl_on_complete, e, out, err), e);
}

rl_status acquire_batch_async(rl_limiter* limiter, const rl_request* requests, size_t count,
                              rl_py_queue* q, PyObject* fut, rl_error** err) {
  rl_py_entry* e = rl_entry_new(q, fut, 1);
  if (!e) return RL_E_NO_MEMORY;
  return rl_started(
      rl_limiter_acquire_batch_async_versioned(limiter, requests, count, RL_DECISION_VERSION,
                                               rl_on_batch_complete, e, err),
      e);
}

rl_status acquire_batch_each_async(rl_limiter* limiter, const rl_request* requests, size_t count,
                                   rl_py_queue* q, PyObject* fut, rl_error** err) {
  rl_py_entry* e = rl_entry_new(q, fut, 2);
  if (!e) return RL_E_NO_MEMORY;
  return rl_started(
      rl_limiter_acquire_batch_each_async(limiter, requests, count, RL_DECISION_VERSION,
                                          rl_on_batch_each_complete, e, err),
      e);
}
