// What a forked child does with the synchronisation objects of its parent's threads. The
// child has none of those threads, but a condition variable they waited on still counts
// them as waiters: glibc's notify then waits for them to leave, forever. The child makes
// such an object anew in place; the old one is abandoned, not destroyed (destroying a
// condition variable with waiters is undefined).
#pragma once
#include <new>

namespace tinyxla {

template <class T>
void remake_in_child(T& object) {
  new (&object) T();
}

}  // namespace tinyxla
