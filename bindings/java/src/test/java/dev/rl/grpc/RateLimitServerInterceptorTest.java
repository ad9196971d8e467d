package dev.rl.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rl.RateLimiter;
import dev.rl.Store;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.MetadataUtils;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The interceptor in real gRPC servers (Netty, on loopback) serving the health service: 5 calls
 * carry librl's fields, the 6th is RESOURCE_EXHAUSTED with them in its trailers, an unreachable
 * store is UNAVAILABLE, skipped methods pass, two servers on one Redis share one limit.
 */
class RateLimitServerInterceptorTest {
  private final List<Runnable> cleanup = new ArrayList<>();

  @AfterEach
  void tearDown() {
    for (int i = cleanup.size() - 1; i >= 0; i--) cleanup.get(i).run();
  }

  private Store open(String url) {
    Store store = Store.open(url);
    cleanup.add(store::close);
    return store;
  }

  private RateLimiter limiter(Store store, String name) {
    RateLimiter limiter = store.limiter(Map.of("limit", "5/h", "name", name));
    cleanup.add(limiter::close);
    return limiter;
  }

  private static final class Client {
    final HealthGrpc.HealthBlockingStub stub;
    final AtomicReference<Metadata> headers = new AtomicReference<>();
    final AtomicReference<Metadata> trailers = new AtomicReference<>();

    Client(ManagedChannel channel) {
      stub =
          HealthGrpc.newBlockingStub(channel)
              .withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(headers, trailers));
    }

    String header(String name) {
      return headers.get().get(Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER));
    }

    String trailer(String name) {
      return trailers.get().get(Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER));
    }

    Status.Code check() {
      try {
        stub.withDeadlineAfter(10, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
        return Status.Code.OK;
      } catch (StatusRuntimeException e) {
        return e.getStatus().getCode();
      }
    }
  }

  private Client serve(RateLimitServerInterceptor interceptor) throws Exception {
    Server server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(
                ServerInterceptors.intercept(new HealthStatusManager().getHealthService(), interceptor))
            .build()
            .start();
    cleanup.add(server::shutdownNow);
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
    cleanup.add(channel::shutdownNow);
    return new Client(channel);
  }

  @Test
  void callsAreLimitedWithLibrlsFields() throws Exception {
    Client client = serve(new RateLimitServerInterceptor(limiter(open("memory://?clock=manual"), "api")));
    for (int i = 1; i <= 5; i++) {
      assertEquals(Status.Code.OK, client.check(), "call " + i);
      assertEquals("\"api\";q=5;w=3600", client.header("ratelimit-policy"));
      assertEquals("\"api\";r=" + (5 - i) + ";t=" + (720 * i), client.header("ratelimit"));
    }
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, client.check());
    assertEquals("720", client.trailer("retry-after"));
    assertEquals("\"api\";r=0;t=3600", client.trailer("ratelimit"));
  }

  @Test
  void anOutageIsUnavailableAndSkippedMethodsPass() throws Exception {
    Store down = open("redis://127.0.0.1:1?connect_timeout_ms=100&timeout_ms=100&breaker_failures=0");
    assertEquals(Status.Code.UNAVAILABLE, serve(new RateLimitServerInterceptor(limiter(down, "d"))).check());
    RateLimitServerInterceptor skipping =
        new RateLimitServerInterceptor(
            limiter(down, "d"), RateLimitServerInterceptor::peerAddress, m -> 1, m -> true);
    assertEquals(Status.Code.OK, serve(skipping).check());
  }

  @Test
  void twoServersOnOneRedisShareOneLimit() throws Exception {
    String url = System.getenv("RL_TEST_REDIS_URL");
    assertTrue(url != null && !url.isEmpty(), "RL_TEST_REDIS_URL is not set");
    String name = "grpc" + System.nanoTime();
    Client a = serve(new RateLimitServerInterceptor(limiter(open(url), name)));
    Client b = serve(new RateLimitServerInterceptor(limiter(open(url), name)));
    List<Status.Code> codes = new ArrayList<>();
    for (int i = 0; i < 7; i++) codes.add((i % 2 == 0 ? a : b).check());
    assertEquals(
        List.of(
            Status.Code.OK, Status.Code.OK, Status.Code.OK, Status.Code.OK, Status.Code.OK,
            Status.Code.RESOURCE_EXHAUSTED, Status.Code.RESOURCE_EXHAUSTED),
        codes);
  }

  @Test
  void nullOptionsAreRefusedNamingThem() {
    NullPointerException e =
        assertThrows(NullPointerException.class, () -> new RateLimitServerInterceptor(null));
    assertEquals("limiter", e.getMessage());
  }
}
