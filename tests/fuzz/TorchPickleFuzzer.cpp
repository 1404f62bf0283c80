// libFuzzer harness: see FuzzTargets.h (built by the fuzz preset, run by packaging/run-fuzzers.sh).
#include "fuzz/FuzzTargets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  medseg::fuzz::torchPickle(data, size);
  return 0;
}
