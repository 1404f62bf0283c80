#include "app/studio/BackgroundPriority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace medseg::studio {

void lowerThisThreadsPriority() {
  // nice 10: the GUI thread gets about nine tenths of a core it shares with such a thread. A failure
  // leaves the normal priority, which only costs responsiveness.
  const auto thread = static_cast<id_t>(syscall(SYS_gettid));
  setpriority(PRIO_PROCESS, thread, 10);
}

}  // namespace medseg::studio
