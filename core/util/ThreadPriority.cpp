#include "core/util/ThreadPriority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace medseg {

void lowerThisThreadsPriority() {
  // nice 10: the thread it competes with gets about nine tenths of a shared core. A failure leaves
  // the normal priority, which only costs speed.
  const auto thread = static_cast<id_t>(syscall(SYS_gettid));
  setpriority(PRIO_PROCESS, thread, 10);
}

}  // namespace medseg
