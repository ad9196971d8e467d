package example;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.concurrent.TimeUnit;

/** Calls Health/Check N times on HOST:PORT; prints each call's status and rl's trailers. */
public final class GrpcHealthClient {
  public static void main(String[] args) throws Exception {
    String[] hostPort = args[0].split(":");
    int calls = args.length > 1 ? Integer.parseInt(args[1]) : 1;
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(hostPort[0], Integer.parseInt(hostPort[1]))
            .usePlaintext()
            .build();
    try {
      HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channel);
      for (int i = 1; i <= calls; i++) {
        try {
          health.check(HealthCheckRequest.getDefaultInstance());
          System.out.println("call " + i + ": OK");
        } catch (StatusRuntimeException e) {
          Metadata t = e.getTrailers();
          System.out.println("call " + i + ": " + e.getStatus().getCode()
              + " retry-after=" + (t == null ? null : t.get(field("retry-after")))
              + " ratelimit=" + (t == null ? null : t.get(field("ratelimit"))));
        }
      }
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private static Metadata.Key<String> field(String name) {
    return Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
  }
}
