#include "collage/cost/measurement_server.h"

#include <unistd.h>

#include <unordered_map>

namespace collage {
namespace {

Cost answer(const Graph& model, const std::unordered_map<std::string, NodeId>& node_by_name,
            InProcessMeasurer& measurer, const BackendLookup& lookup, const std::string& line) {
  MeasureRequest request = decode_measure_request(line);
  const Backend* backend = lookup(request.backend);
  if (backend == nullptr) return Cost::invalid("unknown backend '" + request.backend + "'");
  std::vector<NodeId> nodes;
  for (const std::string& name : request.nodes) {
    auto it = node_by_name.find(name);
    if (it == node_by_name.end()) return Cost::invalid("the model has no node '" + name + "'");
    nodes.push_back(it->second);
  }
  return measurer.measure(model, nodes, *backend);
}

}  // namespace

void serve_measurements(const Graph& model, InProcessMeasurer& measurer,
                        const BackendLookup& lookup, std::istream& requests, std::FILE* replies) {
  std::unordered_map<std::string, NodeId> node_by_name;
  for (std::size_t i = 0; i < model.num_nodes(); ++i) {
    node_by_name.emplace(model.node(static_cast<NodeId>(i)).name, static_cast<NodeId>(i));
  }
  std::string line;
  while (std::getline(requests, line)) {
    Cost cost = Cost::invalid("no answer");
    try {
      cost = answer(model, node_by_name, measurer, lookup, line);
    } catch (const std::exception& e) {
      cost = Cost::invalid(e.what());
    }
    std::fprintf(replies, "%s\n", encode_measure_reply(cost).c_str());
    std::fflush(replies);
  }
}

std::FILE* take_stdout_for_replies() {
  std::fflush(stdout);
  int reply_fd = ::dup(STDOUT_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  return ::fdopen(reply_fd, "w");
}

}  // namespace collage
