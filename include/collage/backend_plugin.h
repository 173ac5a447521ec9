/* Backend plugins: a backend in a shared library of its own, loaded by
 * `collage --backend-plugin PATH.so` (or $COLLAGE_BACKEND_PLUGINS, or
 * collage::load_backend_plugin), without rebuilding Collage.
 *
 * Plain C, so that a plugin may be built by any compiler: no C++ type
 * crosses this boundary. A plugin exports one function,
 *
 *   const collage_backend_plugin* collage_backend_plugin_v1(void);
 *
 * returning a description that lives as long as the library is loaded,
 * whose abi_version is COLLAGE_PLUGIN_ABI_VERSION. Collage refuses a
 * library without that symbol, of another ABI version, or with a required
 * member missing (one line, exit code 2). docs/plugins.md walks through a
 * plugin; examples/plugin/ is a complete one.
 *
 * Everything a call receives is valid for that call only: copy what a
 * kernel keeps (weights, shapes). Collage calls supports() and compile()
 * from one thread at a time; run() of one kernel is never called twice at
 * once. Candidates are measured in a `collage worker` process, so a
 * plugin that crashes, hangs or computes wrong numbers costs the candidates
 * it was asked about (recorded as invalid, with the cause), not the tune.
 */
#ifndef COLLAGE_BACKEND_PLUGIN_H_
#define COLLAGE_BACKEND_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COLLAGE_PLUGIN_ABI_VERSION 1u
#define COLLAGE_PLUGIN_ENTRY "collage_backend_plugin_v1"

/* Element types (the numbering is part of the ABI). */
enum collage_dtype {
  COLLAGE_DTYPE_FLOAT32 = 0,
  COLLAGE_DTYPE_FLOAT64 = 1,
  COLLAGE_DTYPE_FLOAT16 = 2,
  COLLAGE_DTYPE_INT8 = 3,
  COLLAGE_DTYPE_UINT8 = 4,
  COLLAGE_DTYPE_INT16 = 5,
  COLLAGE_DTYPE_INT32 = 6,
  COLLAGE_DTYPE_INT64 = 7,
  COLLAGE_DTYPE_BOOL = 8
};

/* How the search forms a backend's candidates (docs/partitioning.md):
 * LIBRARY: each op it supports and each of its patterns' matches, one call
 * each; GRAPH: any convex region of supported ops, compiled as one program;
 * COMPILER: regions grown by fusion rules around supported ops. */
enum collage_backend_style {
  COLLAGE_STYLE_LIBRARY = 0,
  COLLAGE_STYLE_GRAPH = 1,
  COLLAGE_STYLE_COMPILER = 2
};

/* Edge layouts, as bits of collage_backend_plugin.edge_layouts. ABI 1 has
 * plain (row-major, ONNX's own) only. */
#define COLLAGE_EDGE_LAYOUT_PLAIN 1u

enum collage_attribute_kind {
  COLLAGE_ATTRIBUTE_INT = 0,
  COLLAGE_ATTRIBUTE_FLOAT = 1,
  COLLAGE_ATTRIBUTE_STRING = 2,
  COLLAGE_ATTRIBUTE_INTS = 3,
  COLLAGE_ATTRIBUTE_FLOATS = 4,
  COLLAGE_ATTRIBUTE_STRINGS = 5,
  /* A tensor attribute (Constant's value): its contents are not passed. */
  COLLAGE_ATTRIBUTE_TENSOR = 6
};

typedef struct collage_attribute {
  const char* name;
  int32_t kind; /* collage_attribute_kind */
  int64_t i;
  float f;
  const char* s;
  const int64_t* ints;
  const float* floats;
  const char* const* strings;
  size_t count; /* of ints, floats or strings */
} collage_attribute;

/* A value of the graph: an input, a weight (data != NULL) or a node's output. */
typedef struct collage_value {
  const char* name;
  int32_t dtype; /* collage_dtype */
  int32_t rank;
  const int64_t* shape;
  const void* data; /* the weight's elements (row-major); NULL when not a weight */
  size_t bytes;
} collage_value;

typedef struct collage_node {
  const char* name;
  const char* op_type;
  const char* domain; /* "" for ONNX's own ops */
  const int32_t* inputs; /* indices into collage_graph.values; -1: an omitted optional input */
  size_t num_inputs;
  const int32_t* outputs;
  size_t num_outputs;
  const collage_attribute* attributes;
  size_t num_attributes;
} collage_node;

/* A graph with every shape known: a whole model (in supports()) or one
 * partition (in compile()), nodes in an execution order. */
typedef struct collage_graph {
  const collage_value* values;
  size_t num_values;
  const collage_node* nodes;
  size_t num_nodes;
  const int32_t* inputs; /* the kernel's inputs, in run() order (weights are not inputs) */
  size_t num_inputs;
  const int32_t* outputs; /* the kernel's outputs, in run() order */
  size_t num_outputs;
} collage_graph;

/* A tensor passed to run(): plain layout, `data` holds the elements. */
typedef struct collage_tensor {
  void* data;
  int32_t dtype;
  int32_t rank;
  const int64_t* shape;
} collage_tensor;

typedef struct collage_backend_plugin {
  uint32_t abi_version; /* COLLAGE_PLUGIN_ABI_VERSION */
  /* The backend's name (letters, digits, '_', '-'; not a built-in name). */
  const char* name;
  /* The version of the library it runs on ("Eigen 3.4.0"), and a version
   * of the plugin's own code: both are part of the measurement cache's
   * keys, so measurements never outlive the code that was measured. */
  const char* version;
  const char* code_version;
  int32_t style; /* collage_backend_style */
  /* One line for `collage backends`: what it runs. */
  const char* support;
  /* "#rrggbb" for its partitions in drawings; NULL: a grey. */
  const char* color;
  /* Bits of COLLAGE_EDGE_LAYOUT_*; must include PLAIN. */
  uint32_t edge_layouts;
  /* Multi-op entries (library style), as JSON: {"patterns": [{"name": ...,
   * "pattern": {...}}]}, the pattern language of docs/placement.md; NULL
   * when none. */
  const char* patterns_json;
  /* Passed back to supports() and compile(). */
  void* state;

  /* Nonzero when the backend runs node `node` of `graph` on its own, with
   * its actual types and attributes. Required. */
  int (*supports)(void* state, const collage_graph* graph, size_t node);
  /* Compiles a partition for `threads` threads. Returns the kernel, or NULL
   * with *error set to why (a string the plugin keeps valid until its next
   * call). Required. */
  void* (*compile)(void* state, const collage_graph* partition, int32_t threads,
                   const char** error);
  /* Runs a kernel once: inputs and outputs in the partition's order, the
   * outputs' buffers allocated by Collage. Returns 0, or nonzero with *error
   * set. Required. */
  int (*run)(void* kernel, const collage_tensor* inputs, size_t num_inputs,
             collage_tensor* outputs, size_t num_outputs, const char** error);
  /* Frees a kernel compile() returned. Required. */
  void (*free_kernel)(void* kernel);
} collage_backend_plugin;

typedef const collage_backend_plugin* (*collage_backend_plugin_entry)(void);

#ifdef __cplusplus
}
#endif

#endif /* COLLAGE_BACKEND_PLUGIN_H_ */
