// Status and StatusOr<T>: the error vocabulary of every hdrf layer.
//
// A Status is either OK or carries a code and a message that says what went
// wrong and where ("queue root/eng: capability cpu 20 exceeds parent's 10").
// StatusOr<T> holds either a value or a non-OK Status. No hdrf API throws.
#ifndef HDRF_STATUS_H_
#define HDRF_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace hdrf {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,   // malformed input, a rule of the spec violated
  kNotFound = 2,          // unknown queue, job or resource
  kAlreadyExists = 3,     // duplicate name
  kFailedPrecondition = 4,// request not allowed in the current state
  kOutOfRange = 5,        // overflow, release below zero
  kCorruption = 6,        // damaged store or file
  kIoError = 7,           // the operating system refused
  kUnimplemented = 8,
  kInternal = 9,
  kAborted = 10,          // a stale plan: the state changed under it (plan again)
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}
  Status(const Status&) = default;
  Status(Status&&) noexcept = default;
  Status& operator=(const Status&) = default;
  // Moving an OK status into an OK one copies the code only: batch paths
  // store one outcome per op (Engine::TaskOp::status), and std::string's
  // move assignment of two empty strings cost ~50 instructions per op.
  Status& operator=(Status&& other) noexcept {
    code_ = other.code_;
    if (!message_.empty() || !other.message_.empty()) message_ = std::move(other.message_);
    return *this;
  }

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status FailedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
  static Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: queue root/a: weight must be a number"
  std::string ToString() const;
  // Returns a copy whose message is prefixed with `context + ": "`.
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "StatusOr built from an OK status");
    if (status_.ok()) status_ = Status::Internal("StatusOr built from OK status");
  }
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace hdrf

#define HDRF_RETURN_IF_ERROR(expr)              \
  do {                                          \
    ::hdrf::Status hdrf_status_ = (expr);       \
    if (!hdrf_status_.ok()) return hdrf_status_; \
  } while (0)

#define HDRF_CONCAT_INNER_(a, b) a##b
#define HDRF_CONCAT_(a, b) HDRF_CONCAT_INNER_(a, b)
#define HDRF_ASSIGN_OR_RETURN(lhs, expr) \
  HDRF_ASSIGN_OR_RETURN_IMPL_(HDRF_CONCAT_(hdrf_sor_, __LINE__), lhs, expr)
#define HDRF_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

#endif  // HDRF_STATUS_H_
