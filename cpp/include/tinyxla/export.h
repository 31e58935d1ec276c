// The exported-function file (jax.export's serialize / deserialize): a versioned header,
// a checksum, the Python layer's metadata (argument and result trees and types) and the
// graph's text form. Python writes it; Python and C++ programs read it back.
//
//   tinyxla-export\n
//   version <kExportVersion>\n
//   metadata <bytes>\n
//   graph <bytes>\n
//   fnv1a64 <16 hex digits: of the metadata and graph bytes>\n
//   <metadata><graph text>
#pragma once
#include <string>

#include "tinyxla/graph.h"

namespace tinyxla {

// The newest format this library writes and reads. 2: a gather may carry wrap_negative=1
// (the simplifier's fold of jnp's negative-index normalisation), which version 1 readers
// do not know. 3: a scatter may carry it too, which version 2 readers refuse as an unknown
// attribute.
constexpr int kExportVersion = 3;

struct ExportedFunction {
  int version = kExportVersion;
  std::string metadata;  // JSON written by the Python layer; C++ programs may ignore it
  Graph graph;
};

// The file's bytes; throws an InvalidArgument Error when `graph_text` does not parse.
std::string serialize_exported(const std::string& metadata, const std::string& graph_text);
// Reads a file written by serialize_exported: an InvalidArgument Error starting with
// "[export]" for a file that is not one, one from a newer format version, or a truncated
// or corrupted one.
ExportedFunction deserialize_exported(const std::string& bytes);
// Whether `bytes` starts as an exported-function file does.
bool is_exported(const std::string& bytes);

}  // namespace tinyxla
