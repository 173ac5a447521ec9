// Where the `collage` executable that measures candidates in a worker
// process (`collage worker`, cost/worker_process.h) is found.
#pragma once

#include <string>

namespace collage {

// The `collage` executable that serves measurements: $COLLAGE_WORKER when
// set; this process when it is `collage`; else `collage` beside the library
// holding this code or in ../bin of it (an installed tree); else the one this
// build made. Throws Error when none exists.
std::string worker_executable();

}  // namespace collage
