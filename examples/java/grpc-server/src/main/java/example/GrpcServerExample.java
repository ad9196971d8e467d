package example;

import dev.rl.RateLimiter;
import dev.rl.Store;
import dev.rl.grpc.RateLimitServerInterceptor;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import java.net.InetSocketAddress;
import java.util.Map;

/**
 * A gRPC server limited per client address by rl's interceptor: the standard health service
 * stands in for an application's service (no generated code needed). A denied call is
 * RESOURCE_EXHAUSTED with ratelimit-policy, ratelimit and retry-after in its trailers; a Redis
 * outage is UNAVAILABLE. Run it (after bindings/java/run-tests installed dev.rl:rl into ~/.m2):
 *
 * <pre>
 * cd examples/java/grpc-server && mvn -q package dependency:build-classpath -Dmdep.outputFile=target/cp
 * java -cp target/classes:$(cat target/cp) example.GrpcServerExample redis://127.0.0.1:6379
 * java -cp target/classes:$(cat target/cp) example.GrpcHealthClient 127.0.0.1:50051 6
 * </pre>
 *
 * PORT=0 picks a free port (printed).
 */
public final class GrpcServerExample {
  public static void main(String[] args) throws Exception {
    String url = args.length > 0 ? args[0] : "memory://";
    int port = Integer.parseInt(System.getenv().getOrDefault("PORT", "50051"));
    try (Store store = Store.open(url);
        RateLimiter limiter = store.limiter(Map.of("name", "grpc-example", "limit", "5/1m"))) {
      Server server =
          NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
              .addService(
                  ServerInterceptors.intercept( // the one line that limits the service
                      new HealthStatusManager().getHealthService(),
                      new RateLimitServerInterceptor(limiter)))
              .build()
              .start();
      System.out.println("listening on 127.0.0.1:" + server.getPort() + " (limit 5/1m per client)");
      server.awaitTermination();
    }
  }
}
