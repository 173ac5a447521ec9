// The worker side of isolated measurement: answers measurement requests.
//
// `collage worker` (and test workers with planted backends) call
// serve_measurements() with the model they loaded; it reads one request per
// line, measures it in this process and writes one reply line, until the
// input ends. A request that cannot be served (unknown backend or node) gets
// an invalid reply, never an exception out of the loop.
#pragma once

#include <cstdio>
#include <functional>
#include <istream>
#include <string>

#include "collage/cost/measurer.h"

namespace collage {

// Finds a backend by name; nullptr when there is none.
using BackendLookup = std::function<const Backend*(const std::string&)>;

void serve_measurements(const Graph& model, InProcessMeasurer& measurer,
                        const BackendLookup& lookup, std::istream& requests, std::FILE* replies);

// Points file descriptor 1 at stderr and returns a FILE* on the original
// stdout, so that libraries printing to stdout cannot corrupt the replies.
std::FILE* take_stdout_for_replies();

}  // namespace collage
