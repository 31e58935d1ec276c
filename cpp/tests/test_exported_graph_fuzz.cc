// The exported-graph reader on untrusted text: malformed inputs it must refuse with a
// clear error (each a regression test), then a random-mutation fuzzer over valid exports
// (tests/data/exported_graphs/): every mutant is either refused with a tinyxla::Error or
// parses into a graph that prints back to itself, compiles and (when small and loop-free)
// runs. Crashes are what the sanitizer builds catch (scripts/sanitize.sh address).
//
//   test_exported_graph_fuzz                       # the CI run: 2,000 mutants, seed 1
//   test_exported_graph_fuzz --runs 100000 --seed 7  # the long run
//   test_exported_graph_fuzz --seed 7 --only 4321 --print  # replays (and shows) one mutant
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "test_harness.h"
#include "tinyxla/compiler.h"
#include "tinyxla/graph.h"

using namespace tinyxla;
using namespace tinyxla::testing;

namespace {

#ifndef TINYXLA_FUZZ_CORPUS
#define TINYXLA_FUZZ_CORPUS "tests/data/exported_graphs"
#endif

std::string corpus_dir = TINYXLA_FUZZ_CORPUS;

std::vector<std::string> read_corpus() {
  std::vector<std::string> texts;
  DIR* d = opendir(corpus_dir.c_str());
  if (!d) throw Failure{"cannot open the corpus " + corpus_dir};
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".txt") == 0) names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());  // the same mutants on every file system
  for (const std::string& n : names) {
    std::ifstream f(corpus_dir + "/" + n);
    std::stringstream s;
    s << f.rdbuf();
    texts.push_back(s.str());
  }
  if (texts.empty()) throw Failure{"the corpus " + corpus_dir + " is empty"};
  return texts;
}

// ---- the reader's refusals, one per kind of malformation ----

const char* kValid = "%0 = parameter(0) : f32[3]\n%1 = exp(%0) : f32[3]\nreturn %1\n";

void test_valid_text_parses() { CHECK(parse_graph(kValid).to_text() == kValid); }

void test_truncated_texts_are_refused() {
  const std::string text = kValid;
  for (size_t n = 0; n + 1 < text.size(); ++n) {
    bool refused = false;
    try {
      parse_graph(text.substr(0, n));
    } catch (const Error& e) {
      refused = std::string(e.what()).rfind("[parse_graph]", 0) == 0 ||
                std::string(e.what()).rfind("[", 0) == 0;
    }
    // "...return" with its output cut off is a valid graph of no outputs.
    CHECK(refused || text.substr(0, n).find("return") != std::string::npos);
  }
}

void test_bad_shapes_are_refused() {
  CHECK_THROWS(parse_graph("%0 = parameter(0) : f32[-3]\nreturn %0\n"), "negative dimension");
  CHECK_THROWS(parse_graph("%0 = parameter(0) : f32[4294967296,4294967296]\nreturn %0\n"),
               "more than 2^63 bytes");
  CHECK_THROWS(parse_graph("%0 = parameter(0) : f32[99999999999999999999]\nreturn %0\n"),
               "expected an integer");
  std::string deep = "%0 = parameter(0) : f32[";
  for (int i = 0; i < 65; ++i) deep += i ? ",1" : "1";
  CHECK_THROWS(parse_graph(deep + "]\nreturn %0\n"), "a rank above 64");
  // A result that inference makes too large (from attributes) is refused by the builder.
  GraphBuilder b;
  CHECK_THROWS(b.broadcast_in_dim(b.parameter({}, DType::F32), {int64_t(1) << 32, int64_t(1) << 32}, {}),
               "more than 2^63 bytes");
}

const char* kConv =
    "%0 = parameter(0) : f32[1,5,5,2]\n%1 = parameter(1) : f32[3,3,2,3]\n"
    "%2 = conv(%0, %1) {window_strides=[1,1], padding_lo=[1,1], padding_hi=[1,1], "
    "lhs_dilation=[1,1], rhs_dilation=[1,1], feature_group_count=1, batch_group_count=1, "
    "preferred_element_type=PET} : f32[1,5,5,3]\nreturn %2\n";

std::string conv_with(const std::string& preferred) {
  std::string t = kConv;
  return t.replace(t.find("PET"), 3, preferred);
}

void test_bad_codes_are_refused() {
  CHECK_THROWS(parse_graph("%0 = parameter(0) : f32[3]\n%1 = cumsum(%0) {dimension=0, reverse=5} : f32[3]\n"
                           "return %1\n"),
               "line 2: attribute 'reverse' must be 0 or 1");
  CHECK_THROWS(parse_graph(conv_with("200")), "attribute 'preferred_element_type' has no dtype code 200");
  CHECK_THROWS(parse_graph(conv_with("-2")), "has no dtype code -2");
  CHECK_THROWS(parse_graph("%0 = parameter(0) : f32[3,4]\n%1 = parameter(1) : i32[2,1]\n"
                           "%2 = gather(%0, %1) {offset_dims=[1], collapsed_slice_dims=[0], "
                           "start_index_map=[0], slice_sizes=[1,4], mode=7} : f32[2,4]\nreturn %2\n"),
               "attribute 'mode' has no value 7");
}

// No preferred type prints as -1, which read back as dtype code 255 (and printed past the
// end of the dtype names) before the reader checked codes.
void test_absent_dtype_round_trips() {
  const std::string text = conv_with("-1");
  CHECK(parse_graph(text).to_text() == text);
  CHECK(parse_graph(conv_with("11")).to_text() == conv_with("11"));
}

void test_bad_constants_are_refused() {
  CHECK_THROWS(parse_graph("%0 = constant() {hex=0x0000} : f32[1000000000000]\nreturn %0\n"),
               "hex bytes");
  CHECK_THROWS(parse_graph("%0 = constant() {value=[1, 2]} : f32[1000000000000]\nreturn %0\n"),
               "needs as many values");
  CHECK_THROWS(parse_graph("%0 = constant() {hex=0x00000} : f32[]\nreturn %0\n"), "hex bytes");
  CHECK_THROWS(parse_graph("%0 = constant() {value=[1, 2]} : f32[3]\nreturn %0\n"), "");
}

void test_undefined_values_are_refused() {
  CHECK_THROWS(parse_graph("%0 = parameter(0) : f32[3]\n%1 = exp(%9) : f32[3]\nreturn %1\n"),
               "undefined value");
  CHECK_THROWS(parse_graph("%0 = parameter(0) : f32[3]\nreturn %5\n"), "undefined value");
  CHECK_THROWS(parse_graph("%0 = parameter(0) : f32[3]\n%0 = exp(%0) : f32[3]\nreturn %0\n"),
               "value defined twice");
  CHECK_THROWS(parse_graph("%0 = parameter(1) : f32[3]\nreturn %0\n"), "numbered in order");
}

// while_loop bodies nest; a file may not nest them deeper than the reader's limit.
std::string nested_loops(int depth) {
  std::string text = "%0 = parameter(0) : i32[]\n%1 = constant() {value=true} : bool[]\n";
  std::string close;
  for (int d = 0; d < depth; ++d) {
    text += "%2 = while_loop(%1, %0) {num_consts=0} {\n%0 = parameter(0) : i32[]\n"
            "%1 = constant() {value=false} : bool[]\n";
    close = "return %0, %1\n} : i32[]\n" + close;
  }
  return text + close + "return %0\n";
}

void test_region_depth_is_bounded() {
  CHECK(parse_graph(nested_loops(3)).num_nodes() == 3);
  CHECK(parse_graph(nested_loops(200)).num_nodes() == 3);
  CHECK_THROWS(parse_graph(nested_loops(1001)), "regions nest deeper than 1000");
  // A deep text of unbalanced braces neither recurses without bound nor parses.
  std::string braces(100000, '{');
  CHECK_THROWS(parse_graph("%0 = parameter(0) : f32[3]\n%1 = fused(%0) " + braces), "");
}

// ---- the mutation fuzzer ----

const char* const kTokens[] = {
    "-1", "0", "1", "2", "3", "64", "65", "255", "-9223372036854775808", "9223372036854775807",
    "4294967296", "2147483648", "99999999999999999999", "%", "%0", "%1", "%99999999", "{", "}",
    "[", "]", "(", ")", ",", "=", ":", "\n", " ", "return", "parameter(0)", "while_loop",
    "fused", "constant", "f32", "bf16", "c128", "bool", "i64", "u8", "[]", "[0]", "[-1]",
    "[1,1]", "{value=1}", "{hex=0x00}", "nan", "-inf", "1e308", "num_consts=", "axes=",
    "dims=", "shape=", "op=", "dimension=", "num_keys=", "reverse=",
};

struct Stats {
  int64_t inputs = 0, parsed = 0, compiled = 0, ran = 0, refused = 0, failures = 0;
};

std::string mutate(const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n ? size_t(rng() % n) : 0; };
  std::string s = corpus[pick(corpus.size())];
  // Mostly one or two steps, so that many mutants still parse and reach the compiler.
  int steps = 1;
  while (steps < 6 && rng() % 2) ++steps;
  for (int k = 0; k < steps; ++k) {
    const size_t at = pick(s.size() + 1);
    switch (rng() % 9) {
      case 0:  // one byte: random, or one of the text form's characters
        if (!s.empty()) s[pick(s.size())] = rng() % 2 ? char(rng()) : "0123456789%,=[]{}()-:\n x"[pick(25)];
        break;
      case 1:
        s.insert(at, kTokens[pick(sizeof kTokens / sizeof *kTokens)]);
        break;
      case 2:
        s.erase(at, 1 + pick(16));
        break;
      case 3:
        s.resize(at);  // truncated
        break;
      case 4: {  // a number replaced
        size_t p = s.find_first_of("0123456789", at);
        if (p == std::string::npos) break;
        size_t e = s.find_first_not_of("0123456789", p);
        s.replace(p, (e == std::string::npos ? s.size() : e) - p,
                  kTokens[pick(12)][0] == '-' && p > 0 && s[p - 1] == '-' ? "1" : kTokens[pick(12)]);
        break;
      }
      case 5: {  // a line duplicated or dropped
        size_t b = s.rfind('\n', at ? at - 1 : 0), e = s.find('\n', at);
        b = b == std::string::npos ? 0 : b + 1;
        e = e == std::string::npos ? s.size() : e + 1;
        const std::string line = s.substr(b, e - b);
        if (rng() % 2) s.insert(b, line);
        else s.erase(b, e - b);
        break;
      }
      case 6: {  // spliced with another seed
        const std::string& o = corpus[pick(corpus.size())];
        const size_t from = pick(o.size());
        s = s.substr(0, at) + o.substr(from, pick(o.size() - from + 1));
        break;
      }
      case 7: {  // two lines swapped
        size_t a = s.find('\n', at);
        if (a == std::string::npos) break;
        size_t b = s.find('\n', a + 1);
        if (b == std::string::npos) break;
        const std::string first = s.substr(at, a - at + 1), second = s.substr(a + 1, b - a);
        s.replace(at, b - at + 1, second + first);
        break;
      }
      default:  // a digit bumped, so ids, dims and codes move by one
        if (!s.empty()) {
          size_t p = s.find_first_of("0123456789", at);
          if (p != std::string::npos) s[p] = char('0' + (s[p] - '0' + 1 + pick(9)) % 10);
        }
    }
  }
  return s;
}

bool has_loop(const Graph& g) {
  for (const Node& n : g.nodes())
    if (n.kind == OpKind::while_loop) return true;
  return false;
}

int64_t value_bytes(const Graph& g) {
  int64_t total = 0;
  for (ValueId v = 0; v < g.num_values(); ++v)
    total += num_elements(g.type(v).shape) * int64_t(itemsize(g.type(v).dtype));
  return total;
}

void fail_input(Stats& st, int64_t i, const std::string& why) {
  ++st.failures;
  std::printf("FUZZ FAILURE (input %lld): %s\n", static_cast<long long>(i), why.c_str());
}

// One mutant through the reader, the printer, the compiler and (small, loop-free) a run.
void check_one(const std::string& text, int64_t i, Stats& st) {
  ++st.inputs;
  Graph g;
  try {
    g = parse_graph(text);
  } catch (const Error& e) {
    ++st.refused;
    if (e.what()[0] != '[') fail_input(st, i, std::string("an error without its op: ") + e.what());
    return;
  } catch (const std::exception& e) {
    return fail_input(st, i, std::string("not a tinyxla::Error: ") + e.what());
  }
  ++st.parsed;
  try {
    const std::string printed = g.to_text();
    if (!parse_graph(printed).identical_to(g)) return fail_input(st, i, "does not print back to itself");
    auto exe = compile(g);
    ++st.compiled;
    if (has_loop(g) || value_bytes(g) > (int64_t(1) << 22)) return;
    std::vector<Array> args;
    for (ValueId p : g.parameters()) {
      const ValueType& t = g.type(p);
      std::vector<char> zeros(size_t(num_elements(t.shape)) * itemsize(t.dtype));
      args.push_back(Array::from_host(zeros.data(), t.shape, t.dtype, 0));
    }
    for (Array& out : exe->run(args)) out.wait();
    ++st.ran;
  } catch (const Error& e) {
    if (e.what()[0] != '[') fail_input(st, i, std::string("an error without its op: ") + e.what());
  } catch (const std::exception& e) {
    fail_input(st, i, std::string("not a tinyxla::Error after parsing: ") + e.what());
  }
}

int64_t runs = 2000, seed = 1, only = -1;
bool print_input = false;

void test_mutated_exports() {
  const std::vector<std::string> corpus = read_corpus();
  Stats st;
  for (const std::string& t : corpus) check_one(t, -1, st);
  if (st.parsed != int64_t(corpus.size())) throw Failure{"a seed of the corpus does not parse"};
  st = Stats{};
  for (int64_t i = only >= 0 ? only : 0; i < (only >= 0 ? only + 1 : runs); ++i) {
    std::mt19937_64 rng(uint64_t(seed) * 0x9E3779B97F4A7C15ull + uint64_t(i));
    const std::string text = mutate(corpus, rng);
    if (print_input) std::printf("---- input %lld ----\n%s\n----\n", static_cast<long long>(i), text.c_str());
    check_one(text, i, st);
  }
  std::printf("fuzz: seed %lld, %lld inputs: %lld refused, %lld parsed, %lld compiled, %lld ran, "
              "%lld failures\n",
              static_cast<long long>(seed), static_cast<long long>(st.inputs),
              static_cast<long long>(st.refused), static_cast<long long>(st.parsed),
              static_cast<long long>(st.compiled), static_cast<long long>(st.ran),
              static_cast<long long>(st.failures));
  CHECK(st.failures == 0);
}

}  // namespace

int main(int argc, char** argv) {
  setenv("TINYXLA_CODEGEN", "0", 1);  // the reader and the base tier are under test
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::string(argv[++i]);
    };
    if (a == "--runs") runs = std::atoll(next().c_str());
    else if (a == "--seed") seed = std::atoll(next().c_str());
    else if (a == "--only") only = std::atoll(next().c_str());
    else if (a == "--corpus") corpus_dir = next();
    else if (a == "--print") print_input = true;
    else {
      std::fprintf(stderr, "usage: %s [--runs N] [--seed S] [--only I [--print]] [--corpus DIR]\n", argv[0]);
      return 2;
    }
  }
  return run_tests("exported_graph_fuzz", {
      {"valid_text_parses", test_valid_text_parses},
      {"truncated_texts_are_refused", test_truncated_texts_are_refused},
      {"bad_shapes_are_refused", test_bad_shapes_are_refused},
      {"bad_codes_are_refused", test_bad_codes_are_refused},
      {"absent_dtype_round_trips", test_absent_dtype_round_trips},
      {"bad_constants_are_refused", test_bad_constants_are_refused},
      {"undefined_values_are_refused", test_undefined_values_are_refused},
      {"region_depth_is_bounded", test_region_depth_is_bounded},
      {"mutated_exports", test_mutated_exports},
  });
}
