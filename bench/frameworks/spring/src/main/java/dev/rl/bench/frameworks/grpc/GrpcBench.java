package dev.rl.bench.frameworks.grpc;

import dev.rl.RateLimiter;
import dev.rl.Store;
import dev.rl.grpc.RateLimitServerInterceptor;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * bench/frameworks' grpc-java server (Netty, shaded): unary methods bench.Bench/Bare,
 * bench.Bench/Limited (behind rl's RateLimitServerInterceptor, keyed on the x-api-key metadata;
 * the interceptor skips the other two) and bench.Bench/Store, whose answer is the microseconds one
 * acquire of the same limiter took, timed in the server (the handlers run on grpc-java's default
 * executor, where the interceptor's acquire blocks too). Messages are raw bytes (no protobuf):
 * what grpc_client.py sends and reads.
 *
 * <pre>RL_URL=redis://... java ... GrpcBench   # prints "listening on 127.0.0.1:PORT"</pre>
 */
public final class GrpcBench {
  private GrpcBench() {}

  private static final MethodDescriptor.Marshaller<byte[]> BYTES =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  /** bench.Bench/name, raw bytes both ways (Count's client calls them too). */
  public static MethodDescriptor<byte[], byte[]> method(String name) {
    return MethodDescriptor.<byte[], byte[]>newBuilder(BYTES, BYTES)
        .setType(MethodDescriptor.MethodType.UNARY)
        .setFullMethodName(MethodDescriptor.generateFullMethodName("bench.Bench", name))
        .build();
  }

  public static final Metadata.Key<String> API_KEY =
      Metadata.Key.of("x-api-key", Metadata.ASCII_STRING_MARSHALLER);
  private static final byte[] OK = "ok".getBytes(StandardCharsets.UTF_8);

  public static void main(String[] args) throws Exception {
    String url = System.getenv().getOrDefault("RL_URL", "memory://");
    int port = Integer.parseInt(System.getenv().getOrDefault("PORT", "0"));
    try (Store store = Store.open(url);
        RateLimiter limiter =
            store.limiter(Map.of("name", "bench-fw", "limit", "1000000000/1s"))) {
      // Every request carries its key twice: as x-api-key metadata (the interceptor's key) and
      // as the request's bytes (Store's, which sees no metadata).
      ServerServiceDefinition service =
          ServerServiceDefinition.builder("bench.Bench")
              .addMethod(method("Bare"), ServerCalls.asyncUnaryCall((req, out) -> {
                out.onNext(OK);
                out.onCompleted();
              }))
              .addMethod(method("Limited"), ServerCalls.asyncUnaryCall((req, out) -> {
                out.onNext(OK);
                out.onCompleted();
              }))
              .addMethod(method("Store"), ServerCalls.asyncUnaryCall((req, out) -> {
                String key = new String(req, StandardCharsets.UTF_8);
                long began = System.nanoTime();
                limiter.tryAcquire(key, 1);
                double us = (System.nanoTime() - began) / 1000.0;
                out.onNext(Double.toString(us).getBytes(StandardCharsets.UTF_8));
                out.onCompleted();
              }))
              .build();
      RateLimitServerInterceptor limited =
          new RateLimitServerInterceptor(
              limiter,
              (call, headers) -> headers.get(API_KEY),
              method -> 1,
              method -> !method.equals("bench.Bench/Limited"));
      Server server =
          Grpc.newServerBuilderForPort(port, InsecureServerCredentials.create())
              .addService(ServerInterceptors.intercept(service, limited))
              .build()
              .start();
      System.out.println("listening on 127.0.0.1:" + server.getPort());
      server.awaitTermination();
    }
  }
}
