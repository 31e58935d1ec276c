// What the C++ unit tests share: CHECK / CHECK_THROWS that throw a Failure, host <-> Array
// helpers, and the runner that times each named test and prints ok / FAIL lines.
#pragma once
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "tinyxla/tinyxla.h"

namespace tinyxla::testing {

struct Failure {
  std::string msg;
};

#define CHECK(cond)                                                                    \
  do {                                                                                 \
    if (!(cond))                                                                       \
      throw ::tinyxla::testing::Failure{std::string(__FILE__) + ":" +                  \
                                        std::to_string(__LINE__) +                     \
                                        ": CHECK(" #cond ") failed"};                  \
  } while (0)

// `stmt` must throw a tinyxla::Error whose message contains `text`.
#define CHECK_THROWS(stmt, text)                                                       \
  do {                                                                                 \
    bool thrown_ = false;                                                              \
    try {                                                                              \
      stmt;                                                                            \
    } catch (const ::tinyxla::Error& e_) {                                             \
      thrown_ = true;                                                                  \
      if (std::string(e_.what()).find(text) == std::string::npos)                      \
        throw ::tinyxla::testing::Failure{std::string(__FILE__) + ":" +                \
                                          std::to_string(__LINE__) +                   \
                                          ": wrong error: " + e_.what()};              \
    }                                                                                  \
    if (!thrown_)                                                                      \
      throw ::tinyxla::testing::Failure{std::string(__FILE__) + ":" +                  \
                                        std::to_string(__LINE__) + ": " #stmt          \
                                        " did not throw"};                             \
  } while (0)

template <typename T>
Array from(const std::vector<T>& v, const Shape& shape, DType dtype) {
  return Array::from_host(v.data(), shape, dtype, 0);
}

// The array's elements, after waiting for them.
template <typename T>
std::vector<T> host(const Array& a) {
  a.wait();
  std::vector<T> v(size_t(a.size()));
  a.copy_to_host(v.data());
  return v;
}

struct Test {
  const char* name;
  std::function<void()> fn;
};

// Runs every test, printing "ok name (ms)" or "FAIL name: why", then a summary line;
// the process exit status.
inline int run_tests(const char* suite, const std::vector<Test>& tests) {
  int passed = 0, failed = 0;
  for (const Test& t : tests) {
    const auto start = std::chrono::steady_clock::now();
    try {
      t.fn();
      ++passed;
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      std::printf("ok   %s (%.0f ms)\n", t.name, ms);
    } catch (const Failure& f) {
      ++failed;
      std::printf("FAIL %s: %s\n", t.name, f.msg.c_str());
    } catch (const std::exception& e) {
      ++failed;
      std::printf("FAIL %s: exception %s\n", t.name, e.what());
    }
  }
  std::printf("%s: %d passed, %d failed\n", suite, passed, failed);
  return failed ? 1 : 0;
}

}  // namespace tinyxla::testing
