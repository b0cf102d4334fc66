// ApplyEvent: applies one public Event (hdrf/event.h) to the engine's Tree.
#ifndef HDRF_ENGINE_EVENT_H_
#define HDRF_ENGINE_EVENT_H_

#include "hdrf/event.h"
#include "hdrf/status.h"

namespace hdrf {

namespace engine {
class Tree;
}

// Applies `e` to `tree`. A refused event returns its error and changes
// nothing.
Status ApplyEvent(engine::Tree& tree, const Event& e);

}  // namespace hdrf

#endif  // HDRF_ENGINE_EVENT_H_
