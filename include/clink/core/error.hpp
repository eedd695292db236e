#pragma once
#include <stdexcept>
#include <string>

namespace clink {

// Any error clink reports to a user: bad configuration, bad input, a failed job.
class ClinkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A job failed: the message names the operator, the subtask and the cause.
class JobFailedError : public ClinkError {
 public:
  using ClinkError::ClinkError;
};

// Thrown inside tasks when the job is cancelled; unwinds a task quietly.
class TaskCancelled : public std::exception {
 public:
  const char* what() const noexcept override { return "task cancelled"; }
};

}  // namespace clink
