// Unit tests of the exported-function file (tinyxla/export.h): a round trip, the errors
// for foreign, newer, truncated and corrupted files, and a fuzz of damaged files that must
// each be refused with an Error (never a crash or a wrong graph).
#include <random>
#include <string>

#include "test_harness.h"
#include "tinyxla/export.h"
#include "tinyxla/graph.h"

using namespace tinyxla;
using namespace tinyxla::testing;

namespace {

std::string graph_text() {
  GraphBuilder b;
  const ValueId x = b.parameter({4}, DType::F32);
  b.set_outputs({b.binary(BinaryOp::add, x, x)});
  return b.graph().to_text();
}

void test_round_trip() {
  const std::string text = graph_text();
  const std::string file = serialize_exported("{\"fun_name\": \"f\"}", text);
  CHECK(is_exported(file) && !is_exported(text));
  const ExportedFunction f = deserialize_exported(file);
  CHECK(f.version == kExportVersion && f.metadata == "{\"fun_name\": \"f\"}");
  CHECK(f.graph.to_text() == text);
  CHECK_THROWS(serialize_exported("{}", "%0 = frobnicate() : f32[]\n"), "frobnicate");
}

void test_errors() {
  const std::string file = serialize_exported("{}", graph_text());
  CHECK_THROWS(deserialize_exported("PK\x03\x04"), "[export] not a tinyxla exported function");
  std::string newer = file;
  newer.replace(newer.find("version 3"), 9, "version 4");
  CHECK_THROWS(deserialize_exported(newer), "format version 4, but this tinyxla reads versions 1 to 3");
  // Version 1 and 2 files (the same text form, without a gather's or a scatter's
  // wrap_negative) still read.
  for (const char* version : {"version 1", "version 2"}) {
    std::string older = file;
    older.replace(older.find("version 3"), 9, version);
    CHECK(deserialize_exported(older).version == version[8] - '0');
  }
  CHECK_THROWS(deserialize_exported(file.substr(0, file.size() - 1)), "truncated or corrupt");
  std::string flipped = file;
  flipped[flipped.size() - 3] ^= 1;
  CHECK_THROWS(deserialize_exported(flipped), "checksum does not match");
}

void test_fuzz_damaged_files() {
  const std::string file = serialize_exported("{\"a\": 1}", graph_text());
  std::mt19937 rng(7);
  int refused = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string bad = file;
    const int edits = 1 + int(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % bad.size();
      switch (rng() % 3) {
        case 0: bad[at] = char(rng()); break;
        case 1: bad.erase(at, 1 + rng() % 8); break;
        default: bad.insert(at, 1, char(rng())); break;
      }
    }
    if (bad == file) continue;
    try {
      deserialize_exported(bad);
      // Only an edit the checksum cannot see (in the header's own digits) may pass.
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("[export]") != std::string::npos);
      ++refused;
    }
  }
  CHECK(refused > 1900);
}

}  // namespace

int main() {
  return run_tests("export", {
      {"round_trip", test_round_trip},
      {"errors", test_errors},
      {"fuzz_damaged_files", test_fuzz_damaged_files},
  });
}
