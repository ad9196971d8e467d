package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Status and Source are checked against the library's names, value by value. */
class StatusTest {
  @Test
  void everyStatusHasTheLibrarysNameAndValue() {
    for (Status status : Status.values()) {
      assertEquals(Native.statusName(status.ordinal()), status.cName());
      assertEquals(status, Status.of(status.ordinal()));
    }
    assertNull(Native.statusName(Status.values().length), "rl has a status Status lacks");
  }

  @Test
  void outagesAndDescriptionsAreTheLibrarys() {
    for (Status status : Status.values()) {
      // Exactly the two the failure policy acts on, by librl's own rule.
      assertEquals(status == Status.TIMEOUT || status == Status.BACKEND_UNAVAILABLE, status.isOutage());
      assertTrue(status.description().length() > 5, status.cName());
    }
  }

  @Test
  void everySourceHasTheLibrarysName() {
    for (Source source : Source.values()) {
      assertEquals(Native.sourceName(source.ordinal()), source.name().toLowerCase());
    }
    assertNull(Native.sourceName(Source.values().length), "rl has a source Source lacks");
  }

  @Test
  void theLibraryIsVersionOne() {
    assertEquals('1', Native.version().charAt(0));
  }
}
