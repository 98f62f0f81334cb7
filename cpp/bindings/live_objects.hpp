// Every live object of one binding type (PySimulation, PyVectorSimulation), for
// the fork and exit handlers that must reach each of them. An object inserts
// itself when built and erases itself first thing when destroyed.
#pragma once

#include <unordered_set>

namespace seer::bindings {

// Changed and read under the GIL only (the thread that forks holds it, so a
// forked child's copy is whole). Never freed: an exit handler may run after
// static destructors.
template <class T>
std::unordered_set<T*>& live_objects() {
  static auto* live = new std::unordered_set<T*>();
  return *live;
}

}  // namespace seer::bindings
