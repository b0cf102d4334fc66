package hdrf

// #include <hdrf/c.h>
import "C"

import "fmt"

// Code is a status code of the C interface (hdrf/c.h), and an error value
// that errors.Is matches against any *Error of the same code:
//
//	if errors.Is(err, hdrf.NotFound) { ... }
type Code int32

// The codes, with the values of hdrf_code and hdrf::StatusCode.
const (
	OK                 Code = C.HDRF_OK
	InvalidArgument    Code = C.HDRF_INVALID_ARGUMENT
	NotFound           Code = C.HDRF_NOT_FOUND
	AlreadyExists      Code = C.HDRF_ALREADY_EXISTS
	FailedPrecondition Code = C.HDRF_FAILED_PRECONDITION
	OutOfRange         Code = C.HDRF_OUT_OF_RANGE
	Corruption         Code = C.HDRF_CORRUPTION
	IOError            Code = C.HDRF_IO_ERROR
	Unimplemented      Code = C.HDRF_UNIMPLEMENTED
	Internal           Code = C.HDRF_INTERNAL
	// Aborted: a stale plan (ApplyPlan): the state changed under it; plan
	// again.
	Aborted Code = C.HDRF_ABORTED
)

// String is the code's name: "NotFound".
func (c Code) String() string { return C.GoString(C.hdrf_code_name(C.hdrf_code(c))) }

// Error makes a Code usable as a sentinel error.
func (c Code) Error() string { return "hdrf: " + c.String() }

// Error is what every failing call returns: the code and the engine's
// message ("job x: unknown job").
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("hdrf: %s: %s", e.Code.String(), e.Message) }

// Is reports whether target is e's Code (errors.Is(err, hdrf.NotFound)).
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c == e.Code
}

// CodeOf returns the code of an error from this package, OK for nil and
// Internal for any other error.
func CodeOf(err error) Code {
	switch e := err.(type) {
	case nil:
		return OK
	case *Error:
		return e.Code
	case Code:
		return e
	}
	return Internal
}

// check turns a code and the C message slot into an error and frees the
// message.
func check(code C.hdrf_code, msg *C.char) error {
	if code == C.HDRF_OK {
		if msg != nil {
			C.hdrf_free(unsafePointer(msg))
		}
		return nil
	}
	e := &Error{Code: Code(code)}
	if msg != nil {
		e.Message = C.GoString(msg)
		C.hdrf_free(unsafePointer(msg))
	}
	return e
}
