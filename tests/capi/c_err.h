// Tests of the C interface: an error message slot (char* errptr) that
// frees itself; each call's message replaces the previous one.
#ifndef HDRF_TESTS_CAPI_C_ERR_H_
#define HDRF_TESTS_CAPI_C_ERR_H_

#include <string>

#include "hdrf/c.h"

namespace hdrf::testing {

struct Err {
  char* p = nullptr;
  Err() = default;
  Err(const Err&) = delete;
  Err& operator=(const Err&) = delete;
  ~Err() { hdrf_free(p); }
  char** operator&() { return &p; }
  std::string str() const { return p ? p : "(none)"; }
};

}  // namespace hdrf::testing

#endif  // HDRF_TESTS_CAPI_C_ERR_H_
