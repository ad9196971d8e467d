package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** Status is checked against the library's rl_status_name, value by value. */
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
  void theLibraryIsVersionOne() {
    assertEquals('1', Native.version().charAt(0));
  }
}
