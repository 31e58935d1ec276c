// Example: runs a graph exported from Python with libtinyxla alone.
//
//   # Python: save the graph and its inputs
//   text = jax.jit(f).lower(x, y).as_text()
//   open("f.graph", "w").write(text); np.save("x.npy", x); np.save("y.npy", y)
//   # C++: parse, compile, run, write the outputs as out0.npy, out1.npy, ...
//   run_exported f.graph x.npy y.npy --out results/
//
// Reads and writes .npy files (format versions 1-3, little-endian, C order) of bool,
// int8-64, uint8-64, float16/32/64 and complex64/128. Exits 1 with a message on bad input.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tinyxla/compiler.h"
#include "tinyxla/graph.h"
#include "tinyxla/tinyxla.h"

namespace tx = tinyxla;

namespace {

struct NpyType {
  const char* descr;
  tx::DType dtype;
};
const NpyType kNpyTypes[] = {
    {"|b1", tx::DType::Bool}, {"|i1", tx::DType::I8},  {"<i2", tx::DType::I16},
    {"<i4", tx::DType::I32},  {"<i8", tx::DType::I64}, {"|u1", tx::DType::U8},
    {"<u2", tx::DType::U16},  {"<u4", tx::DType::U32}, {"<u8", tx::DType::U64},
    {"<f2", tx::DType::F16},  {"<f4", tx::DType::F32}, {"<f8", tx::DType::F64},
    {"<c8", tx::DType::C64},  {"<c16", tx::DType::C128},
};

// The value of `key` in the header's Python dict literal, up to its closing delimiter.
std::string header_field(const std::string& header, const std::string& key, const std::string& path) {
  const size_t k = header.find("'" + key + "'");
  const size_t colon = k == std::string::npos ? k : header.find(':', k);
  if (colon == std::string::npos) throw std::runtime_error(path + ": no '" + key + "' in the .npy header");
  size_t b = colon + 1;
  while (b < header.size() && header[b] == ' ') ++b;
  size_t e = std::string::npos;
  if (b < header.size() && header[b] == '(') e = header.find(')', b);
  else if (b < header.size() && header[b] == '\'') e = header.find('\'', b + 1);
  else e = header.find_first_of(",}", b) - 1;
  if (b >= header.size() || e == std::string::npos || e + 1 > header.size())
    throw std::runtime_error(path + ": a malformed '" + key + "' in the .npy header");
  return header.substr(b, e + 1 - b);
}

tx::Array read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0)
    throw std::runtime_error(path + " is not a .npy file");
  const int major = static_cast<unsigned char>(data[6]);
  if (major < 1 || major > 3) throw std::runtime_error(path + ": unknown .npy format version");
  size_t header_len, start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(data[8]) | (size_t(static_cast<unsigned char>(data[9])) << 8);
    start = 10;
  } else {
    if (data.size() < 12) throw std::runtime_error(path + " is truncated");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= size_t(static_cast<unsigned char>(data[8 + i])) << (8 * i);
    start = 12;
  }
  if (header_len > data.size() - start) throw std::runtime_error(path + " is truncated");
  const std::string header = data.substr(start, header_len);
  std::string descr = header_field(header, "descr", path);
  if (descr.size() < 2) throw std::runtime_error(path + ": a malformed dtype in the .npy header");
  descr = descr.substr(1, descr.size() - 2);
  if (descr == "<b1" || descr == "=b1") descr = "|b1";
  if (descr == "<i1") descr = "|i1";
  if (descr == "<u1") descr = "|u1";
  if (header_field(header, "fortran_order", path) != "False")
    throw std::runtime_error(path + ": Fortran-order arrays are not supported");
  const NpyType* type = nullptr;
  for (const NpyType& t : kNpyTypes)
    if (descr == t.descr) type = &t;
  if (!type) throw std::runtime_error(path + ": unsupported dtype " + descr);
  tx::Shape shape;
  std::stringstream dims(header_field(header, "shape", path).substr(1));
  // The data's size, checked against the file before anything is read or allocated.
  size_t bytes = tx::itemsize(type->dtype);
  for (std::string d; std::getline(dims, d, ',');) {
    if (d.find_first_of("0123456789") == std::string::npos) continue;
    char* end = nullptr;
    errno = 0;
    const long long n = std::strtoll(d.c_str(), &end, 10);
    if (errno || n < 0 || (*end && *end != ')' && *end != ' '))
      throw std::runtime_error(path + ": a bad dimension '" + d + "' in the .npy header");
    if (n && bytes > (data.size() + 1) / size_t(n)) throw std::runtime_error(path + " is truncated");
    bytes *= size_t(n);
    shape.push_back(n);
  }
  if (data.size() - start - header_len < bytes) throw std::runtime_error(path + " is truncated");
  return tx::Array::from_host(data.data() + start + header_len, shape, type->dtype, /*device=*/0);
}

void write_npy(const std::string& path, const tx::Array& a) {
  const char* descr = nullptr;
  for (const NpyType& t : kNpyTypes)
    if (t.dtype == a.dtype()) descr = t.descr;
  if (!descr) throw std::runtime_error(std::string("cannot write ") + tx::dtype_name(a.dtype()) + " as .npy");
  std::string shape = "(";
  for (size_t i = 0; i < a.shape().size(); ++i) shape += std::to_string(a.shape()[i]) + (a.shape().size() == 1 ? "," : i + 1 < a.shape().size() ? ", " : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // The data starts at a multiple of 64 bytes; the header ends with a newline.
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::vector<char> values(a.nbytes());
  a.copy_to_host(values.data());
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {char(header.size() & 0xff), char(header.size() >> 8)};
  f.write(len, 2);
  f << header;
  f.write(values.data(), std::streamsize(values.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> inputs;
  std::string graph_path, out_dir = ".";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) out_dir = argv[++i];
    else if (graph_path.empty()) graph_path = a;
    else inputs.push_back(a);
  }
  if (graph_path.empty()) {
    std::fprintf(stderr, "usage: %s GRAPH_TEXT [INPUT.npy ...] [--out DIR]\n", argv[0]);
    return 2;
  }
  try {
    std::ifstream f(graph_path);
    if (!f) throw std::runtime_error("cannot open " + graph_path);
    std::stringstream text;
    text << f.rdbuf();
    const tx::Graph graph = tx::parse_graph(text.str());
    std::vector<tx::Array> args;
    for (const std::string& p : inputs) args.push_back(read_npy(p));
    auto exe = tx::compile(graph);
    std::vector<tx::Array> outs = exe->run(args);
    for (size_t i = 0; i < outs.size(); ++i) {
      outs[i].wait();  // an error inside the graph is raised here
      const std::string path = out_dir + "/out" + std::to_string(i) + ".npy";
      write_npy(path, outs[i]);
      std::printf("%s %s %s\n", path.c_str(), tx::dtype_name(outs[i].dtype()),
                  tx::shape_str(outs[i].shape()).c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "run_exported: %s\n", e.what());
    return 1;
  }
  return 0;
}
