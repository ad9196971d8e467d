package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

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
