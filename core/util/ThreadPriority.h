#pragma once
// Threads that prepare work for another (the studio's file reads and surface builds for the GUI
// thread, the training loader for the network's step) run at a lower priority: on a machine with
// few cores they compete for them, and the thread they serve must come first.
namespace medseg {

// Lowers the calling thread's priority (Linux applies nice values per thread); best effort.
void lowerThisThreadsPriority();

}  // namespace medseg
