// The text form of graphs: a printer and a parser that reads the printed text back into an
// identical graph. One line per node ("%3 = add(%1, %2) : f32[1000]"); constants inline,
// in decimal when every element reads back bit for bit, else as raw hex bytes.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "../ops/structural.h"
#include "tinyxla/error.h"
#include "tinyxla/graph.h"

namespace tinyxla {
namespace {

constexpr size_t kMaxDecimalElements = 16;  // larger constants print as hex bytes
// Limits of what the reader accepts (the text may come from anyone): regions deeper than
// any program nests (each level costs the compiler and executor a frame of state), and
// ranks no kernel takes.
constexpr int kMaxRegionDepth = 1000;
constexpr size_t kMaxRank = 64;

const char* const kDTypeNames[kNumDTypes] = {"bool", "i8",  "i16", "i32", "i64",
                                             "u8",   "u16", "u32", "u64", "f16",
                                             "bf16", "f32", "f64", "c64", "c128"};

// One element of a real or bool constant as decimal text.
std::string element_text(DType t, const char* p) {
  char buf[64];
  auto real = [&](double v, int digits) {
    if (std::isnan(v)) return std::string(std::signbit(v) ? "-nan" : "nan");
    if (std::isinf(v)) return std::string(v < 0 ? "-inf" : "inf");
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return std::string(buf);
  };
  switch (t) {
    case DType::Bool: return *reinterpret_cast<const bool*>(p) ? "true" : "false";
    case DType::F16: return real(to_float(*reinterpret_cast<const half*>(p)), 9);
    case DType::BF16: return real(to_float(*reinterpret_cast<const bfloat16*>(p)), 9);
    case DType::F32: return real(*reinterpret_cast<const float*>(p), 9);
    case DType::F64: return real(*reinterpret_cast<const double*>(p), 17);
    default: break;
  }
  return visit_dtype(t, [&](auto zero) -> std::string {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T>) {
      T v;
      std::memcpy(&v, p, sizeof v);
      if constexpr (std::is_signed_v<T>) return std::to_string(int64_t(v));
      else return std::to_string(uint64_t(v));
    } else {
      return "";
    }
  });
}

// Parses one decimal element into `dst`; false when the text is not a valid element.
bool parse_element(DType t, const std::string& s, char* dst) {
  if (t == DType::Bool) {
    if (s != "true" && s != "false") return false;
    *reinterpret_cast<bool*>(dst) = s == "true";
    return true;
  }
  const char* c = s.c_str();
  char* end = nullptr;
  errno = 0;
  if (is_floating(t)) {
    double d = 0;
    float f = 0;
    bool neg = s[0] == '-';
    std::string body = neg ? s.substr(1) : s;
    if (body == "nan" || body == "inf") {
      d = body == "nan" ? std::nan("") : HUGE_VAL;
      if (neg) d = -d;
      f = float(d);
    } else if (t == DType::F64) {
      d = std::strtod(c, &end);
    } else {
      f = std::strtof(c, &end);
    }
    if (end && (*end || end == c)) return false;
    switch (t) {
      case DType::F16: *reinterpret_cast<half*>(dst) = to_half(f); break;
      case DType::BF16: *reinterpret_cast<bfloat16*>(dst) = to_bfloat16(f); break;
      case DType::F32: std::memcpy(dst, &f, 4); break;
      default: std::memcpy(dst, &d, 8); break;
    }
    return true;
  }
  if (!is_integral(t)) return false;
  int64_t i = 0;
  uint64_t u = 0;
  if (is_signed_int(t)) i = std::strtoll(c, &end, 10);
  else u = std::strtoull(c, &end, 10);
  if (*end || end == c || errno) return false;
  visit_dtype(t, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T>) {
      T v = is_signed_int(t) ? T(i) : T(u);
      std::memcpy(dst, &v, sizeof v);
    }
  });
  return true;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::string hex_bytes(const std::vector<char>& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string s = "0x";
  s.reserve(2 + bytes.size() * 2);
  for (char b : bytes) {
    s += digits[(uint8_t(b) >> 4) & 15];
    s += digits[uint8_t(b) & 15];
  }
  return s;
}

// "{value=...}" when every element prints exactly in decimal, else "{hex=0x...}".
std::string constant_attr(const Array& a) {
  const size_t item = itemsize(a.dtype());
  std::vector<char> bytes(a.nbytes());
  a.copy_to_host(bytes.data());
  const size_t n = size_t(a.size());
  if (n <= kMaxDecimalElements && !is_complex(a.dtype())) {
    std::string list;
    bool exact = true;
    for (size_t i = 0; i < n && exact; ++i) {
      std::string e = element_text(a.dtype(), bytes.data() + i * item);
      char back[16] = {0};
      exact = parse_element(a.dtype(), e, back) &&
              std::memcmp(back, bytes.data() + i * item, item) == 0;
      list += (i ? ", " : "") + e;
    }
    if (exact) return a.ndim() == 0 ? "{value=" + list + "}" : "{value=[" + list + "]}";
  }
  return "{hex=" + hex_bytes(bytes) + "}";
}

std::string attrs(const Node& n) {
  if (n.kind == OpKind::constant) return constant_attr(n.constant);
  const std::string fields = ops::op_def(n.kind).print_attrs(n.attrs);
  return fields.empty() ? fields : "{" + fields + "}";
}

// A node's line up to its body: "%r = op(%a, %b) {attrs}".
void print_head(const Node& n, const std::string& indent, std::string& out) {
  out += indent;
  for (int r = 0; r < n.num_results; ++r) out += (r ? ", %" : "%") + std::to_string(n.first_result + r);
  out += " = " + ops::op_def(n.kind).spelling(n.attrs) + "(";
  if (n.kind == OpKind::parameter) out += std::to_string(n.attr<ops::ParameterAttrs>().index);
  for (size_t i = 0; i < n.inputs.size(); ++i) out += (i ? ", %" : "%") + std::to_string(n.inputs[i]);
  out += ")";
  std::string a = attrs(n);
  if (!a.empty()) out += " " + a;
}

// A node's line after its body: " : types".
void print_tail(const Graph& g, const Node& n, std::string& out) {
  out += " : ";
  for (int r = 0; r < n.num_results; ++r) out += (r ? ", " : "") + type_str(g.type(n.first_result + r));
  out += "\n";
}

// Bodies print in braces inside their node's line, nested graphs from a stack of
// (graph, next node, indent) (no recursion over graphs).
void print_graph(const Graph& root, std::string& out) {
  struct Frame {
    const Graph* g;
    size_t next;
    std::string indent;
  };
  std::vector<Frame> stack{{&root, 0, ""}};
  while (!stack.empty()) {
    Frame& f = stack.back();
    const Graph& g = *f.g;
    if (f.next == g.nodes().size()) {
      out += f.indent + "return";
      for (size_t i = 0; i < g.outputs().size(); ++i) out += (i ? ", %" : " %") + std::to_string(g.outputs()[i]);
      out += "\n";
      stack.pop_back();
      if (!stack.empty()) {  // the region node whose body this was
        const Frame& parent = stack.back();
        out += parent.indent + "}";
        print_tail(*parent.g, parent.g->node(int(parent.next) - 1), out);
      }
      continue;
    }
    const Node& n = g.node(int(f.next++));
    print_head(n, f.indent, out);
    if (n.body) {
      out += " {\n";
      std::string indent = f.indent + "  ";
      stack.push_back({n.body.get(), 0, std::move(indent)});  // f is invalid from here
      continue;
    }
    print_tail(g, n, out);
  }
}

// ---- parsing ----

struct Token {
  enum Kind { Value, Word, Number, Punct, End } kind;
  std::string text;
  int line;
};

std::vector<Token> tokenize(const std::string& s) {
  std::vector<Token> toks;
  int line = 1;
  size_t i = 0;
  auto is_word = [](char c) { return std::isalnum(uint8_t(c)) || c == '_' || c == '.' || c == '+'; };
  while (i < s.size()) {
    char c = s[i];
    if (c == '\n') ++line;
    if (std::isspace(uint8_t(c))) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    if (c == '%') {
      while (j < s.size() && std::isdigit(uint8_t(s[j]))) ++j;
      toks.push_back({Token::Value, s.substr(i + 1, j - i - 1), line});
    } else if (std::isdigit(uint8_t(c)) || (c == '-' && j < s.size() && is_word(s[j]))) {
      // Numbers, "-inf", "1e-07": a word that may hold one sign after an exponent.
      while (j < s.size() && (is_word(s[j]) || (s[j] == '-' && (s[j - 1] == 'e' || s[j - 1] == 'E'))))
        ++j;
      toks.push_back({Token::Number, s.substr(i, j - i), line});
    } else if (std::isalpha(uint8_t(c)) || c == '_') {
      while (j < s.size() && (std::isalnum(uint8_t(s[j])) || s[j] == '_')) ++j;
      toks.push_back({Token::Word, s.substr(i, j - i), line});
    } else {
      toks.push_back({Token::Punct, std::string(1, c), line});
    }
    i = j;
  }
  toks.push_back({Token::End, "", line});
  return toks;
}

class Parser : public ops::AttrReader {
 public:
  explicit Parser(const std::string& text) : toks_(tokenize(text)) {
#define TINYXLA_KIND(name)                                                   \
  for (auto& [spelled, attrs] : ops::op_def(OpKind::name).spellings()) \
    names_[spelled] = {OpKind::name, std::move(attrs)};
    TINYXLA_GRAPH_OPS(TINYXLA_KIND)
#undef TINYXLA_KIND
    for (int t = 0; t < kNumDTypes; ++t) dtypes_[kDTypeNames[t]] = DType(t);
  }

  Graph parse() {
    Graph g = parse_graph_text();
    expect_kind(Token::End, "the end of the text");
    return g;
  }

 private:
  [[noreturn]] void reject(const std::string& why) override {
    --pos_;  // the value just read
    fail(why);
  }
  [[noreturn]] void fail(const std::string& msg) const {
    throw_error(ErrorKind::InvalidArgument, "parse_graph",
                "line " + std::to_string(peek().line) + ": " + msg + (peek().text.empty()
                    ? std::string() : " (at '" + peek().text + "')"));
  }
  const Token& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  bool at(const char* punct) const { return peek().kind == Token::Punct && peek().text == punct; }
  void expect(const char* punct) {
    if (!at(punct)) fail(std::string("expected '") + punct + "'");
    ++pos_;
  }
  std::string expect_kind(Token::Kind kind, const char* what) {
    if (peek().kind != kind) fail(std::string("expected ") + what);
    return toks_[pos_++].text;
  }
  int64_t integer() override {
    std::string s = expect_kind(Token::Number, "an integer");
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (*end || errno) {
      --pos_;
      fail("expected an integer");
    }
    return v;
  }
  std::vector<int64_t> int_list() override {
    std::vector<int64_t> v;
    expect("[");
    while (!at("]")) {
      if (!v.empty()) expect(",");
      v.push_back(integer());
    }
    expect("]");
    return v;
  }
  ValueType type() {
    std::string name = expect_kind(Token::Word, "a type");
    auto it = dtypes_.find(name);
    if (it == dtypes_.end()) {
      --pos_;
      fail("unknown dtype");
    }
    const size_t start = pos_ - 1;  // errors point at the type's dtype
    Shape shape = int_list();
    auto refuse = [&](const std::string& why) {
      pos_ = start;
      fail(why);
    };
    if (shape.size() > kMaxRank) refuse("a rank above " + std::to_string(kMaxRank));
    // Elements times the item size must fit an int64 (sizes are computed in it).
    int64_t bytes = int64_t(itemsize(it->second));
    for (int64_t d : shape) {
      if (d < 0) refuse("a negative dimension in " + shape_str(shape));
      if (d && bytes > std::numeric_limits<int64_t>::max() / d)
        refuse("a type of more than 2^63 bytes");
      bytes = d ? bytes * d : 0;
    }
    return {std::move(shape), it->second};
  }
  int64_t value_number() {
    std::string s = expect_kind(Token::Value, "a %value");
    if (s.empty() || s.size() > 9) {
      --pos_;
      fail("expected a %value");
    }
    return std::stoll(s);
  }
  ValueId value(const std::unordered_map<int64_t, ValueId>& ids) {
    auto it = ids.find(value_number());
    if (it == ids.end()) {
      --pos_;
      fail("undefined value");
    }
    return it->second;
  }

  // The constant's bytes from "value=..." or "hex=0x...".
  Array constant(const std::string& key, const ValueType& t) {
    // The type's size is checked against the text before anything is allocated.
    const size_t item = itemsize(t.dtype), n = size_t(num_elements(t.shape));
    std::vector<char> bytes;
    if (key == "hex") {
      std::string h = expect_kind(Token::Number, "hex bytes");
      if (h.size() < 2 || (h.size() - 2) / 2 != n * item || h.size() % 2 ||
          h.compare(0, 2, "0x") != 0) {
        --pos_;
        fail("expected " + std::to_string(n * item) + " hex bytes");
      }
      bytes.resize(n * item);
      for (size_t i = 0; i < bytes.size(); ++i) {
        int hi = hex_digit(h[2 + 2 * i]), lo = hex_digit(h[3 + 2 * i]);
        if (hi < 0 || lo < 0) {
          --pos_;
          fail("bad hex digit");
        }
        bytes[i] = char(hi * 16 + lo);
      }
    } else {
      if (n > toks_.size() - pos_) fail("a constant of " + std::to_string(n) + " elements needs as many values");
      bytes.resize(n * item);
      bool list = at("[");
      if (list) expect("[");
      for (size_t i = 0; i < n; ++i) {
        if (i) expect(",");
        std::string e = peek().kind == Token::Word || peek().kind == Token::Number
                            ? toks_[pos_++].text : std::string();
        if (!parse_element(t.dtype, e, bytes.data() + i * item)) {
          if (!e.empty()) --pos_;
          fail("bad constant element");
        }
      }
      if (list) expect("]");
      if (!list && n != 1) fail("a constant of several elements needs a [list]");
    }
    return Array::from_host(bytes.data(), t.shape, t.dtype, 0);
  }

  // Reads "{key=value, ...}" into the node; constants need their type, read later.
  void attributes(Node& n, std::string* constant_key, size_t* constant_pos) {
    expect("{");
    bool first = true;
    while (!at("}")) {
      if (!first) expect(",");
      first = false;
      std::string key = expect_kind(Token::Word, "an attribute name");
      expect("=");
      if (key == "value" || key == "hex") {
        *constant_key = key;
        *constant_pos = pos_;
        // Skip the value: a word, number or bracketed list.
        if (at("[")) {
          while (!at("]") && peek().kind != Token::End) ++pos_;
          expect("]");
        } else {
          ++pos_;
        }
      } else if (!ops::op_def(n.kind).parse_attr(n.attrs, key, *this)) {
        --pos_;
        --pos_;
        fail("unknown attribute '" + key + "'");
      }
    }
    expect("}");
  }

  // A statement read up to its body or type: the node and what its types complete.
  struct Statement {
    Node node;
    std::vector<int64_t> results;
    std::string constant_key;
    size_t constant_pos = 0;
  };
  // A graph being read: the root, or the body of the statement `owner` of the graph below.
  struct Block {
    GraphBuilder b;
    std::unordered_map<int64_t, ValueId> ids;
    bool in_fused = false;  // fused bodies cannot nest
    Statement owner;
  };

  // Statements up to "return ..."; a body ends with "}". Nested bodies are read from a
  // stack of blocks (no recursion over graphs).
  Graph parse_graph_text() {
    std::vector<Block> stack(1);
    for (;;) {
      if (peek().kind == Token::Word && peek().text == "return") {
        ++pos_;
        std::vector<ValueId> outputs;
        while (peek().kind == Token::Value) {
          outputs.push_back(value(stack.back().ids));
          if (!at(",")) break;
          expect(",");
        }
        stack.back().b.set_outputs(outputs);
        Graph g = stack.back().b.build();
        if (stack.size() == 1) return g;
        Statement st = std::move(stack.back().owner);
        stack.pop_back();
        st.node.body = std::make_shared<const Graph>(std::move(g));
        expect("}");
        finish_statement(stack.back(), std::move(st));
        continue;
      }
      Statement st = start_statement(stack.back());
      const bool in_fused = stack.back().in_fused;
      if (st.node.kind == OpKind::fused || st.node.kind == OpKind::while_loop) {
        if (st.node.kind == OpKind::fused && in_fused) fail("fused bodies cannot nest");
        if (stack.size() > size_t(kMaxRegionDepth))
          fail("regions nest deeper than " + std::to_string(kMaxRegionDepth));
        expect("{");
        Block body;
        body.in_fused = in_fused || st.node.kind == OpKind::fused;
        body.owner = std::move(st);
        stack.push_back(std::move(body));
        continue;
      }
      finish_statement(stack.back(), std::move(st));
    }
  }

  // "%a, %b = op(%x, ...) {attributes}".
  Statement start_statement(const Block& block) {
    Statement st;
    do {
      if (!st.results.empty()) expect(",");
      st.results.push_back(value_number());
    } while (at(","));
    expect("=");
    std::string name = expect_kind(Token::Word, "an op name");
    auto it = names_.find(name);
    if (it == names_.end()) {
      --pos_;
      fail("unknown op");
    }
    Node& n = st.node;
    n.kind = it->second.first;
    n.attrs = it->second.second;
    expect("(");
    if (n.kind == OpKind::parameter) {
      int64_t index = integer();
      if (index != int64_t(block.b.graph().parameters().size())) fail("parameters must be numbered in order");
    }
    while (!at(")")) {
      if (!n.inputs.empty()) expect(",");
      n.inputs.push_back(value(block.ids));
    }
    expect(")");
    if (at("{") && n.kind != OpKind::fused) attributes(n, &st.constant_key, &st.constant_pos);
    return st;
  }

  // " : types" after the statement (and its body); adds its node to the block.
  void finish_statement(Block& block, Statement st) {
    Node& n = st.node;
    expect(":");
    std::vector<ValueType> types{type()};
    while (at(",")) {
      expect(",");
      types.push_back(type());
    }
    if (types.size() != st.results.size()) fail("one type per result is needed");
    // Attributes that the result type carries.
    ops::op_def(n.kind).take_result_types(n.attrs, types);
    if (n.kind == OpKind::constant) {
      if (st.constant_key.empty()) fail("a constant needs a value");
      size_t resume = pos_;
      pos_ = st.constant_pos;
      n.constant = constant(st.constant_key, types[0]);
      pos_ = resume;
    }
    // An op's own type check (a reshape to another size) refuses the line like the
    // parser's checks do, naming it: the text is the malformed input, not a caller's call.
    ValueId first = -1;
    try {
      first = block.b.add(std::move(n));
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::ResourceExhausted || e.kind() == ErrorKind::Internal) throw;
      fail(e.what());
    }
    const Graph& g = block.b.graph();
    const Node& added = g.node(g.num_nodes() - 1);
    if (added.num_results != int(types.size())) fail("wrong number of results");
    for (size_t r = 0; r < types.size(); ++r) {
      if (g.type(first + ValueId(r)) != types[r])
        fail("the printed type " + type_str(types[r]) + " differs from the inferred " +
             type_str(g.type(first + ValueId(r))));
      if (!block.ids.emplace(st.results[r], first + ValueId(r)).second) fail("value defined twice");
    }
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::unordered_map<std::string, std::pair<OpKind, std::any>> names_;
  std::unordered_map<std::string, DType> dtypes_;
};

}  // namespace

std::string Graph::to_text() const {
  std::string out;
  print_graph(*this, out);
  return out;
}

Graph parse_graph(const std::string& text) { return Parser(text).parse(); }

}  // namespace tinyxla
