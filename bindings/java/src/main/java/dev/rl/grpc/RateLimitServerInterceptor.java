package dev.rl.grpc;

import dev.rl.Decision;
import dev.rl.RateLimitException;
import dev.rl.RateLimitHeaders;
import dev.rl.RateLimiter;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * A gRPC {@link ServerInterceptor} over an rl limiter: {@code
 * ServerInterceptors.intercept(service, new RateLimitServerInterceptor(limiter))}, or {@code
 * serverBuilder.intercept(...)} for every service.
 *
 * <p>Each call acquires {@code cost(method)} units (default 1) of {@code key(call, headers)}
 * (default: the peer's IP address) when it starts, streams included. Over the limit it is closed
 * {@code RESOURCE_EXHAUSTED} with {@code ratelimit-policy}, {@code ratelimit} and {@code
 * retry-after} in its trailers (librl's rendering: the bytes the HTTP middlewares send); a call let
 * through gets {@code ratelimit-policy} and {@code ratelimit} in its headers. A store outage under
 * on_failure=closed is {@code UNAVAILABLE}, never RESOURCE_EXHAUSTED; on_failure=open lets the call
 * through without fields; any other failure is {@code INTERNAL}. {@code skip} exempts methods (e.g.
 * health checks). The decision is made on the thread that starts the call (gRPC's call executor, not
 * its event loop). grpc-api is not a dependency of rl.
 */
public final class RateLimitServerInterceptor implements ServerInterceptor {
  private final RateLimiter limiter;
  private final RateLimitHeaders headers;
  private final BiFunction<ServerCall<?, ?>, Metadata, String> key;
  private final ToLongFunction<String> cost;
  private final Predicate<String> skip;

  /** One unit per call, keyed on the peer's IP address, no method skipped. */
  public RateLimitServerInterceptor(RateLimiter limiter) {
    this(limiter, RateLimitServerInterceptor::peerAddress, method -> 1, method -> false);
  }

  public RateLimitServerInterceptor(
      RateLimiter limiter,
      BiFunction<ServerCall<?, ?>, Metadata, String> key,
      ToLongFunction<String> cost,
      Predicate<String> skip) {
    this.limiter = Objects.requireNonNull(limiter, "limiter");
    this.key = Objects.requireNonNull(key, "key");
    this.cost = Objects.requireNonNull(cost, "cost");
    this.skip = Objects.requireNonNull(skip, "skip");
    this.headers = new RateLimitHeaders(limiter);
  }

  /** The peer's IP address, or "unknown". */
  public static String peerAddress(ServerCall<?, ?> call, Metadata headers) {
    SocketAddress address = call.getAttributes().get(io.grpc.Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    if (address instanceof InetSocketAddress inet) return inet.getAddress().getHostAddress();
    return address != null ? address.toString() : "unknown";
  }

  // The metadata key of each field name (a few: rl_header_name's), made once: Key.of validates and
  // copies the name, per field and call otherwise.
  private static final ConcurrentHashMap<String, Metadata.Key<String>> KEYS =
      new ConcurrentHashMap<>();

  private static Metadata.Key<String> keyOf(String field) {
    Metadata.Key<String> key = KEYS.get(field);
    return key != null
        ? key
        : KEYS.computeIfAbsent(
            field, f -> Metadata.Key.of(f.toLowerCase(Locale.ROOT), Metadata.ASCII_STRING_MARSHALLER));
  }

  private static final Status EXHAUSTED =
      Status.RESOURCE_EXHAUSTED.withDescription("rate limit exceeded");
  private static final Status UNREACHABLE =
      Status.UNAVAILABLE.withDescription("rate limiter store unreachable");

  @Override
  public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
      ServerCall<ReqT, RespT> call, Metadata requestHeaders, ServerCallHandler<ReqT, RespT> next) {
    String method = call.getMethodDescriptor().getFullMethodName();
    if (skip.test(method)) return next.startCall(call, requestHeaders);
    Metadata fields = new Metadata(); // none for fail_open: nothing was counted
    try {
      Decision decision =
          limiter.tryAcquire(key.apply(call, requestHeaders), cost.applyAsLong(method));
      headers.forEach(decision, (name, value) -> fields.put(keyOf(name), value));
      if (!decision.allowed()) {
        call.close(EXHAUSTED, fields);
        return new ServerCall.Listener<>() {};
      }
    } catch (RateLimitException e) {
      Status status =
          e.status().isOutage()
              ? UNREACHABLE
              : Status.INTERNAL.withDescription("rate limiter failed: " + e.getMessage());
      call.close(status, new Metadata());
      return new ServerCall.Listener<>() {};
    }
    return next.startCall(
        new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
          @Override
          public void sendHeaders(Metadata responseHeaders) {
            responseHeaders.merge(fields);
            super.sendHeaders(responseHeaders);
          }
        },
        requestHeaders);
  }
}
