// The exported-function file (see tinyxla/export.h).
#include "tinyxla/export.h"

#include <cstdint>
#include <cstdio>

#include "tinyxla/error.h"

namespace tinyxla {
namespace {

const char kMagic[] = "tinyxla-export\n";

uint64_t fnv1a64(const std::string& a, const std::string& b) {
  uint64_t h = 1469598103934665603ull;
  for (const std::string* s : {&a, &b})
    for (unsigned char c : *s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

[[noreturn]] void corrupt(const std::string& why) {
  throw_error(ErrorKind::InvalidArgument, "export",
              "the exported function is truncated or corrupt: " + why);
}

// Reads "<key> <value>\n" at `pos`, returning the value.
std::string field(const std::string& bytes, size_t& pos, const std::string& key) {
  const size_t end = bytes.find('\n', pos);
  if (end == std::string::npos || bytes.compare(pos, key.size() + 1, key + " ") != 0)
    corrupt("no '" + key + "' line in its header");
  std::string value = bytes.substr(pos + key.size() + 1, end - pos - key.size() - 1);
  pos = end + 1;
  return value;
}

uint64_t number(const std::string& text, const std::string& key) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    corrupt("'" + key + "' is not a number: '" + text + "'");
  return std::stoull(text);
}

}  // namespace

bool is_exported(const std::string& bytes) { return bytes.compare(0, sizeof kMagic - 1, kMagic) == 0; }

std::string serialize_exported(const std::string& metadata, const std::string& graph_text) {
  parse_graph(graph_text);  // only a graph that reads back is written
  std::string out = kMagic;
  out += "version " + std::to_string(kExportVersion) + "\n";
  out += "metadata " + std::to_string(metadata.size()) + "\n";
  out += "graph " + std::to_string(graph_text.size()) + "\n";
  out += "fnv1a64 " + hex(fnv1a64(metadata, graph_text)) + "\n";
  return out + metadata + graph_text;
}

ExportedFunction deserialize_exported(const std::string& bytes) {
  if (!is_exported(bytes))
    throw_error(ErrorKind::InvalidArgument, "export",
                "not a tinyxla exported function: it does not start with 'tinyxla-export'");
  size_t pos = sizeof kMagic - 1;
  ExportedFunction f;
  const uint64_t version = number(field(bytes, pos, "version"), "version");
  if (version < 1 || version > uint64_t(kExportVersion))
    throw_error(ErrorKind::InvalidArgument, "export",
                "the exported function has format version " + std::to_string(version) +
                    ", but this tinyxla reads versions 1 to " + std::to_string(kExportVersion) +
                    "; export it again with this version of tinyxla");
  f.version = int(version);
  const uint64_t nmeta = number(field(bytes, pos, "metadata"), "metadata");
  const uint64_t ngraph = number(field(bytes, pos, "graph"), "graph");
  const std::string sum = field(bytes, pos, "fnv1a64");
  if (bytes.size() - pos != nmeta + ngraph)
    corrupt("its header says " + std::to_string(nmeta + ngraph) + " bytes follow, the file has " +
            std::to_string(bytes.size() - pos));
  f.metadata = bytes.substr(pos, nmeta);
  const std::string text = bytes.substr(pos + nmeta, ngraph);
  if (hex(fnv1a64(f.metadata, text)) != sum) corrupt("its checksum does not match its contents");
  f.graph = parse_graph(text);
  return f;
}

}  // namespace tinyxla
