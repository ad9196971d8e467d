/*
 * rl_jni.c: the native layer of the Java binding, the methods of
 * dev.rl.Native over rl.h. It only moves values across: decisions travel as
 * long[] (Native.DECISION_FIELDS per decision), failures as RateLimitException
 * (status, message), and asynchronous results complete a CompletableFuture
 * through Native.complete. Every JNI call that can throw is checked, and no
 * Java exception is left pending across an rl callback.
 */
#include <jni.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rl/rl.h"

/* Fields per decision in the long[] handed to Java (Native.DECISION_FIELDS). */
enum { DECISION_FIELDS = 8 };
/* Native.call's op for rl_limiter_acquire_wait (after the rl_op values). */
enum { OP_ACQUIRE_WAIT = 4 };

static JavaVM* cached_vm;
static jclass native_class;            /* dev.rl.Native */
static jmethodID complete_method;      /* Native.complete(CompletableFuture, int, long[], String) */
static jclass exception_class;         /* dev.rl.RateLimitException */
static jmethodID exception_init;       /* RateLimitException(int, String) */
static jclass string_class;            /* java.lang.String */
static jclass each_class;              /* dev.rl.Native$Each */
static jmethodID each_init;            /* Native.Each(long[], int[], String[]) */
static jmethodID complete_each_method; /* Native.completeEach(CompletableFuture, Native.Each) */
/* Detaches an rl thread from the JVM when the thread ends. */
static pthread_key_t detach_key;

static void detach_thread(void* vm) {
  (*(JavaVM*)vm)->DetachCurrentThread((JavaVM*)vm);
}

static jclass global_class(JNIEnv* env, const char* name) {
  jclass local = (*env)->FindClass(env, name);
  if (local == NULL) return NULL;
  jclass global = (jclass)(*env)->NewGlobalRef(env, local);
  (*env)->DeleteLocalRef(env, local);
  return global;
}

JNIEXPORT jint JNI_OnLoad(JavaVM* vm, void* reserved) {
  (void)reserved;
  JNIEnv* env;
  if ((*vm)->GetEnv(vm, (void**)&env, JNI_VERSION_1_8) != JNI_OK) return JNI_ERR;
  cached_vm = vm;
  native_class = global_class(env, "dev/rl/Native");
  exception_class = global_class(env, "dev/rl/RateLimitException");
  string_class = global_class(env, "java/lang/String");
  each_class = global_class(env, "dev/rl/Native$Each");
  if (native_class == NULL || exception_class == NULL || string_class == NULL ||
      each_class == NULL) {
    return JNI_ERR;
  }
  complete_method =
      (*env)->GetStaticMethodID(env, native_class, "complete",
                                "(Ljava/util/concurrent/CompletableFuture;I[JLjava/lang/String;)V");
  exception_init = (*env)->GetMethodID(env, exception_class, "<init>", "(ILjava/lang/String;)V");
  each_init = (*env)->GetMethodID(env, each_class, "<init>", "([J[I[Ljava/lang/String;)V");
  complete_each_method =
      (*env)->GetStaticMethodID(env, native_class, "completeEach",
                                "(Ljava/util/concurrent/CompletableFuture;Ldev/rl/Native$Each;)V");
  if (complete_method == NULL || exception_init == NULL || each_init == NULL ||
      complete_each_method == NULL) {
    return JNI_ERR;
  }
  if (pthread_key_create(&detach_key, detach_thread) != 0) return JNI_ERR;
  return JNI_VERSION_1_8;
}

/* ------------------------------------------------------------------ */
/* Errors */

static void throw_status(JNIEnv* env, int status, const char* message) {
  jstring text = (*env)->NewStringUTF(env, message);
  if (text == NULL) return; /* OutOfMemoryError pending */
  jobject error = (*env)->NewObject(env, exception_class, exception_init, (jint)status, text);
  (*env)->DeleteLocalRef(env, text);
  if (error == NULL) return;
  (*env)->Throw(env, (jthrowable)error);
  (*env)->DeleteLocalRef(env, error);
}

/* Throws err as a RateLimitException and frees it; returns 1 when it threw. */
static int throw_if_failed(JNIEnv* env, rl_status status, rl_error* err) {
  if (status == RL_OK) return 0;
  throw_status(env, status, err != NULL ? rl_error_message(err) : rl_status_name(status));
  rl_error_free(err);
  return 1;
}

static void throw_null(JNIEnv* env, const char* what) {
  jclass npe = (*env)->FindClass(env, "java/lang/NullPointerException");
  if (npe != NULL) (*env)->ThrowNew(env, npe, what);
}

/* ------------------------------------------------------------------ */
/* Strings */

/* text (a URL, a setting's name or value) as standard UTF-8, NUL-terminated,
 * for librl to read as a C string; free() it. NULL with an exception pending:
 * null text is NullPointerException naming what, a U+0000 in it is librl's
 * RL_E_INVALID_ARG "<what>: contains a NUL byte" (rl_text_check), since C
 * would cut the text there. Not GetStringUTFChars: its modified UTF-8 writes
 * U+0000 as C0 80 and a supplementary character as two surrogates, bytes
 * librl refuses as invalid UTF-8. A lone surrogate becomes U+FFFD, as in
 * String.getBytes(UTF_8). */
static char* utf8_arg_in(JNIEnv* env, jstring text, const char* what, char* buf, size_t cap);

static char* utf8_arg(JNIEnv* env, jstring text, const char* what) {
  return utf8_arg_in(env, text, what, NULL, 0);
}

/* utf8_arg into buf (cap bytes) when the text fits, so that a hot path
 * takes no malloc; else a new string as utf8_arg's. Free the result only
 * when it is not buf. */
static char* utf8_arg_in(JNIEnv* env, jstring text, const char* what, char* buf, size_t cap) {
  if (text == NULL) {
    throw_null(env, what);
    return NULL;
  }
  jsize length = (*env)->GetStringLength(env, text);
  size_t need = 3 * (size_t)length + 1; /* a UTF-16 unit is at most 3 bytes */
  char* out = need <= cap ? buf : malloc(need);
  const jchar* chars = out != NULL ? (*env)->GetStringCritical(env, text, NULL) : NULL;
  if (chars == NULL) {
    if (out != buf) free(out);
    if (!(*env)->ExceptionCheck(env)) throw_status(env, RL_E_NO_MEMORY, "out of memory");
    return NULL;
  }
  size_t n = 0;
  for (jsize i = 0; i < length; i++) {
    uint32_t c = chars[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < length && chars[i + 1] >= 0xDC00 &&
        chars[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (chars[++i] - 0xDC00);
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      c = 0xFFFD;
    }
    if (c < 0x80) {
      out[n++] = (char)c;
    } else if (c < 0x800) {
      out[n++] = (char)(0xC0 | c >> 6);
      out[n++] = (char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out[n++] = (char)(0xE0 | c >> 12);
      out[n++] = (char)(0x80 | (c >> 6 & 0x3F));
      out[n++] = (char)(0x80 | (c & 0x3F));
    } else {
      out[n++] = (char)(0xF0 | c >> 18);
      out[n++] = (char)(0x80 | (c >> 12 & 0x3F));
      out[n++] = (char)(0x80 | (c >> 6 & 0x3F));
      out[n++] = (char)(0x80 | (c & 0x3F));
    }
  }
  (*env)->ReleaseStringCritical(env, text, chars);
  out[n] = '\0';
  rl_error* err = NULL;
  rl_status status = rl_text_check(out, n, what, &err); /* before err is read */
  if (throw_if_failed(env, status, err)) {
    if (out != buf) free(out);
    return NULL;
  }
  return out;
}

/* ------------------------------------------------------------------ */
/* Values across */

/* A Java byte[] key copied to C memory, freed with key_free: every valid key
 * (1 to RL_MAX_KEY_LEN bytes) fits in `small`, on the caller's stack, so the
 * hot path has no malloc/free of its own; a longer one (which librl refuses,
 * naming it) gets a buffer of its own. */
typedef struct key_copy {
  char* bytes;
  size_t len;
  char small[RL_MAX_KEY_LEN];
} key_copy;

static int key_get(JNIEnv* env, jbyteArray key, key_copy* out) {
  if (key == NULL) {
    throw_null(env, "key");
    return 0;
  }
  jsize len = (*env)->GetArrayLength(env, key);
  out->len = (size_t)len;
  out->bytes = out->len <= sizeof out->small ? out->small : malloc(out->len);
  if (out->bytes == NULL) {
    throw_status(env, RL_E_NO_MEMORY, "out of memory copying a key");
    return 0;
  }
  (*env)->GetByteArrayRegion(env, key, 0, len, (jbyte*)out->bytes);
  return 1;
}

static void key_free(key_copy* key) {
  if (key->bytes != key->small) free(key->bytes);
}

static void decision_put(jlong* out, const rl_decision* d) {
  out[0] = d->allowed;
  out[1] = d->limit;
  out[2] = d->remaining;
  out[3] = d->retry_after_us;
  out[4] = d->reset_after_us;
  out[5] = d->source;
  out[6] = d->limit_index;
  /* The double's bits: Java reads them with Double.longBitsToDouble. */
  memcpy(&out[7], &d->suppression_factor, sizeof(double));
}

/* count decisions as a new long[] (NULL with an exception pending). */
static jlongArray decisions_array(JNIEnv* env, const rl_decision* decisions, size_t count) {
  jlongArray array = (*env)->NewLongArray(env, (jsize)(count * DECISION_FIELDS));
  if (array == NULL) return NULL;
  jlong fields[DECISION_FIELDS];
  for (size_t i = 0; i < count; i++) {
    decision_put(fields, &decisions[i]);
    (*env)->SetLongArrayRegion(env, array, (jsize)(i * DECISION_FIELDS), DECISION_FIELDS, fields);
  }
  return array;
}

/* A batch's results, one per request, as a new Native.Each: every request's
 * decision fields (zero for a failed one), status and message (null for one
 * that did not fail). NULL with an exception pending. */
static jobject each_object(JNIEnv* env, const rl_decision* decisions, const rl_status* statuses,
                           const rl_error* const* errors, size_t count) {
  jlongArray fields = decisions_array(env, decisions, count);
  jintArray codes = fields != NULL ? (*env)->NewIntArray(env, (jsize)count) : NULL;
  jobjectArray messages =
      codes != NULL ? (*env)->NewObjectArray(env, (jsize)count, string_class, NULL) : NULL;
  jobject each = NULL;
  if (messages != NULL) {
    for (size_t i = 0; i < count; i++) {
      jint code = (jint)statuses[i];
      (*env)->SetIntArrayRegion(env, codes, (jsize)i, 1, &code);
      if (errors[i] == NULL) continue;
      jstring message = (*env)->NewStringUTF(env, rl_error_message(errors[i]));
      if (message == NULL) break; /* OutOfMemoryError pending */
      (*env)->SetObjectArrayElement(env, messages, (jsize)i, message);
      (*env)->DeleteLocalRef(env, message);
    }
    if (!(*env)->ExceptionCheck(env)) {
      each = (*env)->NewObject(env, each_class, each_init, fields, codes, messages);
    }
  }
  if (fields != NULL) (*env)->DeleteLocalRef(env, fields);
  if (codes != NULL) (*env)->DeleteLocalRef(env, codes);
  if (messages != NULL) (*env)->DeleteLocalRef(env, messages);
  return each;
}

static rl_request request_of(const key_copy* key, jlong cost, jlong timeout_us) {
  rl_request request = RL_REQUEST_INIT;
  request.key = key->bytes;
  request.key_len = key->len;
  request.cost = cost;
  request.timeout_us = timeout_us;
  return request;
}

/* ------------------------------------------------------------------ */
/* Completions, on rl's threads */

/* The JNIEnv of the calling rl thread, attached once as a daemon (detached by
 * detach_key's destructor when the thread ends). NULL when the JVM is gone. */
static JNIEnv* callback_env(void) {
  JNIEnv* env;
  jint got = (*cached_vm)->GetEnv(cached_vm, (void**)&env, JNI_VERSION_1_8);
  if (got == JNI_OK) return env;
  if (got != JNI_EDETACHED) return NULL;
  JavaVMAttachArgs args = {JNI_VERSION_1_8, "rl-callback", NULL};
  if ((*cached_vm)->AttachCurrentThreadAsDaemon(cached_vm, (void**)&env, &args) != JNI_OK) {
    return NULL;
  }
  pthread_setspecific(detach_key, cached_vm);
  return env;
}

/* Completes the future (a global ref, deleted here: exactly once, since rl
 * runs each callback exactly once). */
static void complete(void* user_data, rl_status status, const rl_decision* decisions, size_t count,
                     const rl_error* err) {
  JNIEnv* env = callback_env();
  if (env == NULL) return; /* the JVM is shutting down: nobody waits */
  jobject future = (jobject)user_data;
  jlongArray result = NULL;
  jstring message = NULL;
  if (status == RL_OK) {
    result = decisions_array(env, decisions, count);
  } else {
    message = (*env)->NewStringUTF(env, err != NULL ? rl_error_message(err) : "");
  }
  if ((*env)->ExceptionCheck(env)) {
    /* Out of memory building the result: fail the future instead. */
    (*env)->ExceptionClear(env);
    status = RL_E_NO_MEMORY;
  }
  (*env)->CallStaticVoidMethod(env, native_class, complete_method, future, (jint)status, result,
                               message);
  if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env); /* complete() catches its own */
  if (result != NULL) (*env)->DeleteLocalRef(env, result);
  if (message != NULL) (*env)->DeleteLocalRef(env, message);
  (*env)->DeleteGlobalRef(env, future);
}

static void complete_one(void* user_data, rl_status status, const rl_decision* decision,
                         const rl_error* err) {
  complete(user_data, status, decision, decision != NULL ? 1 : 0, err);
}

/* Completes the future of a batch with a result per request (a global ref,
 * deleted here), with a Native.Each, or null when it could not be built. */
static void complete_each(void* user_data, const rl_decision* decisions, const rl_status* statuses,
                          const rl_error* const* errors, size_t count) {
  JNIEnv* env = callback_env();
  if (env == NULL) return; /* the JVM is shutting down: nobody waits */
  jobject future = (jobject)user_data;
  jobject each = each_object(env, decisions, statuses, errors, count);
  if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env); /* each is NULL: out of memory */
  (*env)->CallStaticVoidMethod(env, native_class, complete_each_method, future, each);
  if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env); /* completeEach catches its own */
  if (each != NULL) (*env)->DeleteLocalRef(env, each);
  (*env)->DeleteGlobalRef(env, future);
}

/* A global ref to future for a callback, or NULL with an exception pending. */
static jobject future_ref(JNIEnv* env, jobject future) {
  if (future == NULL) {
    throw_null(env, "future");
    return NULL;
  }
  jobject ref = (*env)->NewGlobalRef(env, future);
  if (ref == NULL) throw_status(env, RL_E_NO_MEMORY, "out of memory holding a future");
  return ref;
}

/* ------------------------------------------------------------------ */
/* Library */

JNIEXPORT jstring JNICALL Java_dev_rl_Native_statusName(JNIEnv* env, jclass cls, jint status) {
  (void)cls;
  const char* name = rl_status_name(status);
  return name != NULL ? (*env)->NewStringUTF(env, name) : NULL;
}

JNIEXPORT jboolean JNICALL Java_dev_rl_Native_statusIsOutage(JNIEnv* env, jclass cls, jint status) {
  (void)env;
  (void)cls;
  return rl_status_is_outage(status) ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT jstring JNICALL Java_dev_rl_Native_statusDescription(JNIEnv* env, jclass cls,
                                                               jint status) {
  (void)cls;
  const char* text = rl_status_description(status);
  return text != NULL ? (*env)->NewStringUTF(env, text) : NULL;
}

JNIEXPORT jlong JNICALL Java_dev_rl_Native_maxWaitUs(JNIEnv* env, jclass cls) {
  (void)env;
  (void)cls;
  return (jlong)RL_MAX_WAIT_US;
}

JNIEXPORT jstring JNICALL Java_dev_rl_Native_sourceName(JNIEnv* env, jclass cls, jint source) {
  (void)cls;
  const char* name = rl_source_name(source);
  return name != NULL ? (*env)->NewStringUTF(env, name) : NULL;
}

JNIEXPORT jstring JNICALL Java_dev_rl_Native_version(JNIEnv* env, jclass cls) {
  (void)cls;
  return (*env)->NewStringUTF(env, rl_version());
}

/* ------------------------------------------------------------------ */
/* Stores */

JNIEXPORT jlong JNICALL Java_dev_rl_Native_storeOpen(JNIEnv* env, jclass cls, jstring url) {
  (void)cls;
  char* text = utf8_arg(env, url, "url");
  if (text == NULL) return 0;
  rl_store* store = NULL;
  rl_error* err = NULL;
  rl_status status = rl_store_open(text, NULL, &store, &err);
  free(text);
  if (throw_if_failed(env, status, err)) return 0;
  return (jlong)(intptr_t)store;
}

JNIEXPORT void JNICALL Java_dev_rl_Native_storeClose(JNIEnv* env, jclass cls, jlong store) {
  (void)env, (void)cls;
  rl_store_close((rl_store*)(intptr_t)store);
}

JNIEXPORT void JNICALL Java_dev_rl_Native_storeFree(JNIEnv* env, jclass cls, jlong store) {
  (void)env, (void)cls;
  rl_store_free((rl_store*)(intptr_t)store);
}

/* ASCII: librl escapes every other byte of the display form. */
JNIEXPORT jstring JNICALL Java_dev_rl_Native_storeDisplayUrl(JNIEnv* env, jclass cls, jlong store) {
  (void)cls;
  return (*env)->NewStringUTF(env, rl_store_display_url((rl_store*)(intptr_t)store));
}

JNIEXPORT void JNICALL Java_dev_rl_Native_clockMove(JNIEnv* env, jclass cls, jlong store,
                                                    jboolean set, jlong us) {
  (void)cls;
  rl_error* err = NULL;
  rl_store* s = (rl_store*)(intptr_t)store;
  rl_status status = set ? rl_store_clock_set(s, us, &err) : rl_store_clock_advance(s, us, &err);
  throw_if_failed(env, status, err);
}

/* The store's statistics as a long[], in the order StoreStats.of reads. */
JNIEXPORT jlongArray JNICALL Java_dev_rl_Native_storeStats(JNIEnv* env, jclass cls, jlong store) {
  (void)cls;
  rl_store_stats stats = RL_STORE_STATS_INIT;
  rl_error* err = NULL;
  rl_status status = rl_store_get_stats((rl_store*)(intptr_t)store, &stats, &err);
  if (throw_if_failed(env, status, err)) return NULL;
  jlong allowed = 0, denied = 0, failures = 0;
  for (int i = 0; i < 4; i++) allowed += (jlong)stats.allowed[i], denied += (jlong)stats.denied[i];
  for (int i = 0; i < 16; i++) failures += (jlong)stats.failures[i];
  jlong values[] = {stats.breaker_state,
                    (jlong)stats.breaker_opened,
                    allowed,
                    denied,
                    failures,
                    (jlong)stats.round_trips,
                    stats.round_trip_p50_us,
                    stats.round_trip_p95_us,
                    stats.round_trip_p99_us,
                    stats.round_trip_max_us,
                    (jlong)stats.leases_taken,
                    (jlong)stats.lease_units_leased,
                    (jlong)stats.lease_units_unused,
                    (jlong)stats.lease_units_returned,
                    (jlong)stats.lease_decisions};
  jsize count = (jsize)(sizeof values / sizeof values[0]);
  jlongArray array = (*env)->NewLongArray(env, count);
  if (array != NULL) (*env)->SetLongArrayRegion(env, array, 0, count, values);
  return array;
}

JNIEXPORT jstring JNICALL Java_dev_rl_Native_storeMetrics(JNIEnv* env, jclass cls, jlong store) {
  (void)cls;
  char* text = rl_store_metrics((rl_store*)(intptr_t)store);
  if (text == NULL) {
    throw_status(env, RL_E_NO_MEMORY, "out of memory formatting metrics");
    return NULL;
  }
  jstring out = (*env)->NewStringUTF(env, text);
  rl_string_free(text);
  return out;
}

/* ------------------------------------------------------------------ */
/* Limiters */

/* settings: name, value, name, value, ... */
JNIEXPORT jlong JNICALL Java_dev_rl_Native_limiterNew(JNIEnv* env, jclass cls, jlong store,
                                                      jobjectArray settings) {
  (void)cls;
  if (settings == NULL) {
    throw_null(env, "settings");
    return 0;
  }
  rl_config* cfg = rl_config_new();
  if (cfg == NULL) {
    throw_status(env, RL_E_NO_MEMORY, "out of memory making a config");
    return 0;
  }
  rl_limiter* limiter = NULL;
  jsize count = (*env)->GetArrayLength(env, settings);
  for (jsize i = 0; i + 1 < count; i += 2) {
    jstring name = (jstring)(*env)->GetObjectArrayElement(env, settings, i);
    jstring value = (jstring)(*env)->GetObjectArrayElement(env, settings, i + 1);
    if (name == NULL || value == NULL) {
      if (!(*env)->ExceptionCheck(env)) throw_null(env, "setting");
      goto done;
    }
    /* A value's message names its setting (as in Node and Go); the name when it is text. */
    char* n = utf8_arg(env, name, "limiter settings key");
    char* v = n != NULL ? utf8_arg(env, value, n) : NULL;
    rl_error* err = NULL;
    rl_status status = v != NULL ? rl_config_set(cfg, n, v, &err) : RL_OK;
    free(v);
    free(n);
    (*env)->DeleteLocalRef(env, name);
    (*env)->DeleteLocalRef(env, value);
    if ((*env)->ExceptionCheck(env) || throw_if_failed(env, status, err)) goto done;
  }
  rl_error* err = NULL;
  rl_status status = rl_limiter_new((rl_store*)(intptr_t)store, cfg, &limiter, &err);
  throw_if_failed(env, status, err);
done:
  rl_config_free(cfg);
  return (jlong)(intptr_t)limiter;
}

JNIEXPORT void JNICALL Java_dev_rl_Native_limiterFree(JNIEnv* env, jclass cls, jlong limiter) {
  (void)env, (void)cls;
  rl_limiter_free((rl_limiter*)(intptr_t)limiter);
}

JNIEXPORT jstring JNICALL Java_dev_rl_Native_limiterName(JNIEnv* env, jclass cls, jlong limiter) {
  (void)cls;
  return (*env)->NewStringUTF(env, rl_limiter_name((rl_limiter*)(intptr_t)limiter));
}

/* The limiter's limits as a long[]: limit, window_us, burst for each (rl has 1 to 8). */
JNIEXPORT jlongArray JNICALL Java_dev_rl_Native_limiterLimits(JNIEnv* env, jclass cls,
                                                              jlong limiter) {
  (void)cls;
  rl_limit_info info[8];
  size_t count = rl_limiter_limits((rl_limiter*)(intptr_t)limiter, info, 8);
  if (count > 8) count = 8;
  jlong values[3 * 8];
  for (size_t i = 0; i < count; i++) {
    values[3 * i] = info[i].limit;
    values[3 * i + 1] = info[i].window_us;
    values[3 * i + 2] = info[i].burst;
  }
  jlongArray array = (*env)->NewLongArray(env, (jsize)(3 * count));
  if (array != NULL) (*env)->SetLongArrayRegion(env, array, 0, (jsize)(3 * count), values);
  return array;
}

/* ------------------------------------------------------------------ */
/* HTTP header fields */

JNIEXPORT jstring JNICALL Java_dev_rl_Native_headerName(JNIEnv* env, jclass cls, jint header) {
  (void)cls;
  const char* name = rl_header_name(header);
  return name != NULL ? (*env)->NewStringUTF(env, name) : NULL;
}

/* Limits and a name of this size or less take no malloc per render (a
 * request's hot path in the HTTP and gRPC integrations). */
#define RENDER_STACK_LIMITS 4
#define RENDER_STACK_NAME 256

/* rl_headers_render. limits: limit, window_us, burst for each (as
 * limiterLimits gives them); then the decision's fields as arguments, not an
 * array made per request. Returns the value of each field, indexed by
 * rl_header, null where the field is not sent; without with_policy,
 * RateLimit-Policy, where sent, is "" (it depends on the limiter alone: the
 * caller keeps its value, and librl still says when it goes). */

JNIEXPORT jobjectArray JNICALL Java_dev_rl_Native_headersRender(
    JNIEnv* env, jclass cls, jstring name, jlongArray limits, jboolean allowed, jlong remaining,
    jlong retry_after_us, jlong reset_after_us, jlong limit_index, jlong source,
    jboolean with_policy) {
  (void)cls;
  if (name == NULL || limits == NULL) {
    throw_null(env, name == NULL ? "name" : "limits");
    return NULL;
  }
  rl_decision given = RL_DECISION_INIT;
  given.allowed = allowed != JNI_FALSE;
  given.remaining = remaining;
  given.retry_after_us = retry_after_us;
  given.reset_after_us = reset_after_us;
  /* Out of int32's range is beyond any limiter's limits: librl names it. */
  given.limit_index = limit_index > INT32_MAX   ? INT32_MAX
                      : limit_index < INT32_MIN ? INT32_MIN
                                                : (int32_t)limit_index;
  given.source = source > INT32_MAX ? INT32_MAX : source < INT32_MIN ? INT32_MIN : (int32_t)source;

  jsize length = (*env)->GetArrayLength(env, limits);
  size_t count = (size_t)length / 3;
  rl_limit_info info_stack[RENDER_STACK_LIMITS];
  jlong numbers_stack[3 * RENDER_STACK_LIMITS];
  char name_stack[RENDER_STACK_NAME];
  int on_stack = (size_t)length <= 3 * RENDER_STACK_LIMITS;
  rl_limit_info* info =
      on_stack ? info_stack : calloc(count > 0 ? count : 1, sizeof(rl_limit_info));
  jlong* numbers = on_stack ? numbers_stack : calloc((size_t)length, sizeof(jlong));
  char* chars = utf8_arg_in(env, name, "name", name_stack, sizeof name_stack);
  jobjectArray out = NULL;
  char* values[RL_HEADER_COUNT] = {NULL};
  rl_error* err = NULL;
  if (info == NULL || numbers == NULL || chars == NULL) {
    if (!(*env)->ExceptionCheck(env)) throw_status(env, RL_E_NO_MEMORY, "out of memory");
    goto done;
  }
  (*env)->GetLongArrayRegion(env, limits, 0, length, numbers);
  for (size_t i = 0; i < count; i++) {
    info[i].limit = numbers[3 * i];
    info[i].window_us = numbers[3 * i + 1];
    info[i].burst = numbers[3 * i + 2];
  }
  rl_status status = rl_headers_render(chars, info, count, &given, values, RL_HEADER_COUNT, &err);
  if (!throw_if_failed(env, status, err)) {
    out = (*env)->NewObjectArray(env, RL_HEADER_COUNT, string_class, NULL);
    for (int i = 0; out != NULL && i < RL_HEADER_COUNT; i++) {
      if (values[i] == NULL) continue;
      const int kept = i == RL_HEADER_RATELIMIT_POLICY && !with_policy;
      jstring value = (*env)->NewStringUTF(env, kept ? "" : values[i]);
      if (value == NULL) {
        out = NULL;
        break;
      }
      (*env)->SetObjectArrayElement(env, out, i, value);
      (*env)->DeleteLocalRef(env, value);
    }
  }
done:
  for (int i = 0; i < RL_HEADER_COUNT; i++) rl_string_free(values[i]);
  if (chars != name_stack) free(chars);
  if (!on_stack) {
    free(numbers);
    free(info);
  }
  return out;
}

/* One call, blocking: op is an rl_op or OP_ACQUIRE_WAIT (with wait_us). The
 * decision's fields go into `out` (DECISION_FIELDS longs, allocated by the
 * Java caller, where allocating is cheapest): one JNI call fewer than a new
 * long[] made here, and no local reference. */
JNIEXPORT void JNICALL Java_dev_rl_Native_call(JNIEnv* env, jclass cls, jlong limiter, jint op,
                                               jbyteArray key, jlong cost, jlong timeout_us,
                                               jlong wait_us, jlongArray out) {
  (void)cls;
  if (out == NULL) {
    throw_null(env, "out");
    return;
  }
  key_copy k;
  if (!key_get(env, key, &k)) return;
  rl_request request = request_of(&k, cost, timeout_us);
  rl_limiter* l = (rl_limiter*)(intptr_t)limiter;
  rl_decision decision = RL_DECISION_INIT;
  rl_error* err = NULL;
  rl_status status;
  switch (op) {
    case RL_OP_ACQUIRE: status = rl_limiter_acquire(l, &request, &decision, &err); break;
    case RL_OP_PEEK: status = rl_limiter_peek(l, &request, &decision, &err); break;
    case RL_OP_REFUND: status = rl_limiter_refund(l, &request, &decision, &err); break;
    case RL_OP_RESET: status = rl_limiter_reset(l, k.bytes, k.len, &err); break;
    case OP_ACQUIRE_WAIT:
      status = rl_limiter_acquire_wait(l, &request, wait_us, &decision, &err);
      break;
    default: status = RL_E_INVALID_ARG; break;
  }
  key_free(&k);
  if (throw_if_failed(env, status, err)) return;
  jlong fields[DECISION_FIELDS];
  decision_put(fields, &decision);
  /* ArrayIndexOutOfBoundsException pending when out is too short. */
  (*env)->SetLongArrayRegion(env, out, 0, DECISION_FIELDS, fields);
}

/* One call, completing future on rl's thread. */
JNIEXPORT void JNICALL Java_dev_rl_Native_callAsync(JNIEnv* env, jclass cls, jlong limiter, jint op,
                                                    jbyteArray key, jlong cost, jlong timeout_us,
                                                    jobject future) {
  (void)cls;
  key_copy k;
  if (!key_get(env, key, &k)) return;
  jobject ref = future_ref(env, future);
  if (ref == NULL) {
    key_free(&k);
    return;
  }
  rl_request request = request_of(&k, cost, timeout_us);
  rl_error* err = NULL;
  rl_status status = rl_limiter_call_async((rl_limiter*)(intptr_t)limiter, (rl_op)op, &request,
                                           complete_one, ref, &err);
  key_free(&k);
  if (status != RL_OK) (*env)->DeleteGlobalRef(env, ref); /* the callback never runs */
  throw_if_failed(env, status, err);
}

/* A wait, completing future on rl's thread: returns its rl_wait (0 with an
 * exception pending when it did not start). */
JNIEXPORT jlong JNICALL Java_dev_rl_Native_acquireWaitAsync(JNIEnv* env, jclass cls, jlong limiter,
                                                            jbyteArray key, jlong cost,
                                                            jlong timeout_us, jlong wait_us,
                                                            jobject future) {
  (void)cls;
  key_copy k;
  if (!key_get(env, key, &k)) return 0;
  jobject ref = future_ref(env, future);
  if (ref == NULL) {
    key_free(&k);
    return 0;
  }
  rl_request request = request_of(&k, cost, timeout_us);
  rl_wait* wait = NULL;
  rl_error* err = NULL;
  rl_status status = rl_limiter_acquire_wait_start((rl_limiter*)(intptr_t)limiter, &request,
                                                   wait_us, complete_one, ref, &wait, &err);
  key_free(&k);
  if (status != RL_OK) (*env)->DeleteGlobalRef(env, ref); /* the callback never runs */
  throw_if_failed(env, status, err);
  return (jlong)(intptr_t)wait;
}

JNIEXPORT void JNICALL Java_dev_rl_Native_waitCancel(JNIEnv* env, jclass cls, jlong wait) {
  (void)env;
  (void)cls;
  rl_wait_cancel((rl_wait*)(intptr_t)wait);
}

JNIEXPORT void JNICALL Java_dev_rl_Native_waitFree(JNIEnv* env, jclass cls, jlong wait) {
  (void)env;
  (void)cls;
  rl_wait_free((rl_wait*)(intptr_t)wait);
}

/* keys[i] with costs[i] as rl_requests over one buffer; NULL with an
 * exception pending. Free the result and *buffer. */
static rl_request* batch_requests(JNIEnv* env, jobjectArray keys, jlongArray costs,
                                  jlong timeout_us, size_t* count, char** buffer) {
  if (keys == NULL || costs == NULL) {
    throw_null(env, keys == NULL ? "keys" : "costs");
    return NULL;
  }
  jsize n = (*env)->GetArrayLength(env, keys);
  if ((*env)->GetArrayLength(env, costs) != n) {
    throw_status(env, RL_E_INVALID_ARG, "costs: not as many as keys");
    return NULL;
  }
  size_t total = 0;
  for (jsize i = 0; i < n; i++) {
    jbyteArray key = (jbyteArray)(*env)->GetObjectArrayElement(env, keys, i);
    if (key == NULL) {
      if (!(*env)->ExceptionCheck(env)) throw_null(env, "keys[i]");
      return NULL;
    }
    total += (size_t)(*env)->GetArrayLength(env, key);
    (*env)->DeleteLocalRef(env, key);
  }
  rl_request* requests = calloc((size_t)n + 1, sizeof *requests);
  jlong* cost_values = calloc((size_t)n + 1, sizeof *cost_values);
  *buffer = malloc(total + 1);
  if (requests == NULL || cost_values == NULL || *buffer == NULL) {
    free(requests), free(cost_values), free(*buffer);
    throw_status(env, RL_E_NO_MEMORY, "out of memory copying a batch");
    return NULL;
  }
  (*env)->GetLongArrayRegion(env, costs, 0, n, cost_values);
  size_t at = 0;
  for (jsize i = 0; i < n; i++) {
    jbyteArray key = (jbyteArray)(*env)->GetObjectArrayElement(env, keys, i);
    jsize len = (*env)->GetArrayLength(env, key);
    (*env)->GetByteArrayRegion(env, key, 0, len, (jbyte*)*buffer + at);
    (*env)->DeleteLocalRef(env, key);
    rl_request request = RL_REQUEST_INIT;
    request.key = *buffer + at;
    request.key_len = (size_t)len;
    request.cost = cost_values[i];
    request.timeout_us = timeout_us;
    requests[i] = request;
    at += (size_t)len;
  }
  free(cost_values);
  *count = (size_t)n;
  return requests;
}

JNIEXPORT jlongArray JNICALL Java_dev_rl_Native_batch(JNIEnv* env, jclass cls, jlong limiter,
                                                      jobjectArray keys, jlongArray costs,
                                                      jlong timeout_us) {
  (void)cls;
  size_t count = 0;
  char* buffer = NULL;
  rl_request* requests = batch_requests(env, keys, costs, timeout_us, &count, &buffer);
  if (requests == NULL) return NULL;
  rl_decision* decisions = calloc(count + 1, sizeof *decisions);
  jlongArray result = NULL;
  if (decisions == NULL) {
    throw_status(env, RL_E_NO_MEMORY, "out of memory for a batch's decisions");
  } else {
    rl_decision init = RL_DECISION_INIT;
    for (size_t i = 0; i < count; i++) decisions[i] = init;
    rl_error* err = NULL;
    rl_status status =
        rl_limiter_acquire_batch((rl_limiter*)(intptr_t)limiter, requests, count, decisions, &err);
    if (!throw_if_failed(env, status, err)) result = decisions_array(env, decisions, count);
  }
  free(decisions), free(requests), free(buffer);
  return result;
}

JNIEXPORT void JNICALL Java_dev_rl_Native_batchAsync(JNIEnv* env, jclass cls, jlong limiter,
                                                     jobjectArray keys, jlongArray costs,
                                                     jlong timeout_us, jobject future) {
  (void)cls;
  size_t count = 0;
  char* buffer = NULL;
  rl_request* requests = batch_requests(env, keys, costs, timeout_us, &count, &buffer);
  if (requests == NULL) return;
  jobject ref = future_ref(env, future);
  if (ref != NULL) {
    rl_error* err = NULL;
    /* Decisions of this rl.h's version: complete() steps by sizeof(rl_decision). */
    rl_status status = rl_limiter_acquire_batch_async_versioned(
        (rl_limiter*)(intptr_t)limiter, requests, count, RL_DECISION_VERSION, complete, ref, &err);
    if (status != RL_OK) (*env)->DeleteGlobalRef(env, ref); /* the callback never runs */
    throw_if_failed(env, status, err);
  }
  free(requests), free(buffer);
}

JNIEXPORT jobject JNICALL Java_dev_rl_Native_batchEach(JNIEnv* env, jclass cls, jlong limiter,
                                                       jobjectArray keys, jlongArray costs,
                                                       jlong timeout_us) {
  (void)cls;
  size_t count = 0;
  char* buffer = NULL;
  rl_request* requests = batch_requests(env, keys, costs, timeout_us, &count, &buffer);
  if (requests == NULL) return NULL;
  rl_decision* decisions = calloc(count + 1, sizeof *decisions);
  rl_status* statuses = calloc(count + 1, sizeof *statuses);
  rl_error** errors = calloc(count + 1, sizeof *errors);
  jobject result = NULL;
  if (decisions == NULL || statuses == NULL || errors == NULL) {
    throw_status(env, RL_E_NO_MEMORY, "out of memory for a batch's results");
  } else {
    rl_decision init = RL_DECISION_INIT;
    for (size_t i = 0; i < count; i++) decisions[i] = init;
    rl_error* err = NULL;
    rl_status status = rl_limiter_acquire_batch_each((rl_limiter*)(intptr_t)limiter, requests,
                                                     count, decisions, statuses, errors, &err);
    if (!throw_if_failed(env, status, err)) {
      result = each_object(env, decisions, statuses, (const rl_error* const*)errors, count);
      for (size_t i = 0; i < count; i++) rl_error_free(errors[i]);
    }
  }
  free(decisions), free(statuses), free(errors), free(requests), free(buffer);
  return result;
}

JNIEXPORT void JNICALL Java_dev_rl_Native_batchEachAsync(JNIEnv* env, jclass cls, jlong limiter,
                                                         jobjectArray keys, jlongArray costs,
                                                         jlong timeout_us, jobject future) {
  (void)cls;
  size_t count = 0;
  char* buffer = NULL;
  rl_request* requests = batch_requests(env, keys, costs, timeout_us, &count, &buffer);
  if (requests == NULL) return;
  jobject ref = future_ref(env, future);
  if (ref != NULL) {
    rl_error* err = NULL;
    /* Decisions of this rl.h's version: each_object steps by sizeof(rl_decision). */
    rl_status status =
        rl_limiter_acquire_batch_each_async((rl_limiter*)(intptr_t)limiter, requests, count,
                                            RL_DECISION_VERSION, complete_each, ref, &err);
    if (status != RL_OK) (*env)->DeleteGlobalRef(env, ref); /* the callback never runs */
    throw_if_failed(env, status, err);
  }
  free(requests), free(buffer);
}
