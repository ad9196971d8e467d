package dev.rl.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits a controller method (or every method of a controller) with the limiter {@code
 * rl.limiters.<value>}, keyed and costed as that limiter's {@code key} and {@code cost} say
 * (cost here, when set, wins).
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RateLimited {
  /** The limiter's name under rl.limiters. */
  String value();

  /** Units one request takes; 0: the limiter's cost setting. */
  long cost() default 0;
}
