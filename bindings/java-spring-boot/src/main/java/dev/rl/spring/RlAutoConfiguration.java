package dev.rl.spring;

import dev.rl.Store;
import dev.rl.micrometer.StoreMetrics;
import java.util.Objects;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * rl in a Spring Boot application: the store of rl.url, the limiters of rl.limiters (made at
 * startup), a servlet filter (or, in a reactive application, a WebFlux filter) for the limiters'
 * paths, {@link RateLimited} controller methods, and the store's metrics in Micrometer
 * when it is there.
 */
@AutoConfiguration
@EnableConfigurationProperties(RlProperties.class)
public class RlAutoConfiguration {

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public Store rlStore(RlProperties properties) {
    Objects.requireNonNull(properties.getUrl(), "rl.url");
    try {
      return Store.open(properties.getUrl());
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("rl.url: " + e.getMessage(), e);
    }
  }

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public RateLimiters rlLimiters(Store rlStore, RlProperties properties) {
    return new RateLimiters(rlStore, properties.getLimiters());
  }

  /** The servlet filter and the @RateLimited interceptor. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnClass(WebMvcConfigurer.class)
  static class Servlet {
    @Bean
    FilterRegistrationBean<RateLimitFilter> rlFilter(RateLimiters limiters) {
      FilterRegistrationBean<RateLimitFilter> bean =
          new FilterRegistrationBean<>(new RateLimitFilter(limiters));
      bean.setOrder(Ordered.HIGHEST_PRECEDENCE + 100);
      return bean;
    }

    @Bean
    WebMvcConfigurer rlRateLimitedMethods(RateLimiters limiters) {
      return new WebMvcConfigurer() {
        @Override
        public void addInterceptors(InterceptorRegistry registry) {
          registry.addInterceptor(new RateLimitedInterceptor(limiters));
        }
      };
    }
  }

  /** The WebFlux filters (paths, @RateLimited), when the application is reactive. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
  @ConditionalOnClass(name = "org.springframework.web.server.WebFilter")
  static class Reactive {
    @Bean
    RateLimitWebFilter rlWebFilter(RateLimiters limiters) {
      return new RateLimitWebFilter(limiters);
    }

    @Bean
    RateLimitedWebFilter rlRateLimitedHandlers(
        RateLimiters limiters,
        @Qualifier("requestMappingHandlerMapping")
            ObjectProvider<RequestMappingHandlerMapping> mapping) {
      return new RateLimitedWebFilter(limiters, mapping);
    }
  }

  /** The store's statistics as Micrometer meters (rl.decisions, rl.store.round.trip, ...). */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "io.micrometer.core.instrument.binder.MeterBinder")
  static class Metrics {
    @Bean
    StoreMetrics rlStoreMetrics(Store rlStore) {
      return new StoreMetrics(rlStore);
    }
  }
}
