#pragma once
// Threads that prepare data for the GUI (file reads, surface builds) run at a lower priority than the
// GUI thread: on a machine with few cores they compete for them, and the GUI must answer first.
namespace medseg::studio {

// Lowers the calling thread's priority (Linux applies nice values per thread); best effort.
void lowerThisThreadsPriority();

}  // namespace medseg::studio
