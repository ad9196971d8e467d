/* Leaks one block on purpose: LeakSanitizer must report it at exit. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  void* volatile leaked = malloc(4096);
  leaked = NULL;
  (void)leaked;
  puts("leak_probe: leaked 4096 bytes; LeakSanitizer must report them");
  return 0;
}
