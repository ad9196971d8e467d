package dev.rl.spring;

import java.util.concurrent.Executor;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.ClassUtils;
import reactor.core.scheduler.Schedulers;

/**
 * Where a WebFlux request goes on after rl's async acquire completed on rl's I/O thread: on Reactor
 * Netty, the event loop of the request's own connection (where WebFlux runs it without a filter,
 * and where its response is written: one move off rl's thread, as any async reply makes); on
 * another server, Reactor's parallel scheduler (and from there to the server's own threads).
 */
final class EventLoops {
  private EventLoops() {}

  private static final boolean REACTOR_NETTY =
      ClassUtils.isPresent("reactor.netty.Connection", EventLoops.class.getClassLoader());

  private static final Executor PARALLEL = task -> Schedulers.parallel().schedule(task);

  static Executor of(ServerHttpRequest request) {
    if (!REACTOR_NETTY) return PARALLEL;
    Object nativeRequest;
    try {
      nativeRequest = ServerHttpRequestDecorator.getNativeRequest(request);
    } catch (IllegalArgumentException notAServerRequest) { // a test's mock, a custom request
      return PARALLEL;
    }
    Executor loop = Netty.loop(nativeRequest);
    return loop != null ? loop : PARALLEL;
  }

  /** Loaded only when Reactor Netty is there. */
  private static final class Netty {
    static Executor loop(Object nativeRequest) {
      return nativeRequest instanceof reactor.netty.Connection c ? c.channel().eventLoop() : null;
    }
  }
}
