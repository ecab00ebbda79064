#include <stddef.h>
#include <stdint.h>

// libFuzzer's driver, run from the target's own main (SwiftPM gives every executable one).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
