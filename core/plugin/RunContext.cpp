#include "core/plugin/RunContext.h"

#include "core/util/Interrupt.h"

namespace medseg::plugin {

// The host's one stop flag (core/util/Interrupt): its signal handlers set it, and plugins share it
// because they link the same medseg_core.
bool RunContext::cancelRequested() const { return interruptRequested(); }
void RunContext::throwIfCancelled(const char* where) const { throwIfInterrupted(where); }

}  // namespace medseg::plugin
