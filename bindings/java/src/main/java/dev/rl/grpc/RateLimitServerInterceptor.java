package dev.rl.grpc;

import dev.rl.Decision;
import dev.rl.RateLimitException;
import dev.rl.RateLimitHeaders;
import dev.rl.RateLimiter;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;
import java.util.Objects;
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

  private static Metadata metadataOf(Map<String, String> fields) {
    Metadata md = new Metadata();
    for (Map.Entry<String, String> f : fields.entrySet()) {
      md.put(Metadata.Key.of(f.getKey().toLowerCase(), Metadata.ASCII_STRING_MARSHALLER), f.getValue());
    }
    return md;
  }

  @Override
  public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
      ServerCall<ReqT, RespT> call, Metadata requestHeaders, ServerCallHandler<ReqT, RespT> next) {
    String method = call.getMethodDescriptor().getFullMethodName();
    if (skip.test(method)) return next.startCall(call, requestHeaders);
    Decision decision;
    Map<String, String> fields;
    try {
      decision = limiter.tryAcquire(key.apply(call, requestHeaders), cost.applyAsLong(method));
      fields = headers.of(decision); // none for fail_open: nothing was counted
    } catch (RateLimitException e) {
      Status status =
          e.status().isOutage()
              ? Status.UNAVAILABLE.withDescription("rate limiter store unreachable")
              : Status.INTERNAL.withDescription("rate limiter failed: " + e.getMessage());
      call.close(status, new Metadata());
      return new ServerCall.Listener<>() {};
    }
    if (!decision.allowed()) {
      call.close(
          Status.RESOURCE_EXHAUSTED.withDescription("rate limit exceeded"), metadataOf(fields));
      return new ServerCall.Listener<>() {};
    }
    if (fields.isEmpty()) return next.startCall(call, requestHeaders);
    Metadata extra = metadataOf(fields);
    return next.startCall(
        new io.grpc.ForwardingServerCall.SimpleForwardingServerCall<>(call) {
          @Override
          public void sendHeaders(Metadata responseHeaders) {
            responseHeaders.merge(extra);
            super.sendHeaders(responseHeaders);
          }
        },
        requestHeaders);
  }
}
