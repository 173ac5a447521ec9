// Where the `collage` executable that measures candidates in a worker
// process (`collage worker`, cost/worker_process.h) is found.
#pragma once

#include <string>

namespace collage {

// The `collage` executable that serves measurements: $COLLAGE_WORKER when
// set; this process when it is `collage` or says it serves
// (serve_measurements_here); else `collage` beside the library holding this
// code or in ../bin of it (an installed tree); else the one this build made.
// Throws Error when none exists.
std::string worker_executable();

// Says that this process's executable serves `collage worker`, whatever its
// file is named: the command-line tool calls it first, so that a copy named
// otherwise (`collage-1.2`) measures with itself, not with the `collage`
// found beside it or in the tree it was built in, whose import of a model
// may differ. `serves` false takes it back.
void serve_measurements_here(bool serves = true);

}  // namespace collage
