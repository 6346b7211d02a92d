//! The adapter's one error type.
use std::fmt;

pub type Result<T> = std::result::Result<T, Error>;

/// What a call can fail with: the library's error (a refused call launches nothing) or a
/// cudarc driver call's.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// The library refused the call or failed ([`cudakernels::Error`]); the adapter's own
    /// refusals of streams and buffers take its variants too.
    Kernels(cudakernels::Error),
    /// A cudarc driver call failed: a stream's wait for a buffer's event, the record of one,
    /// or an error cudarc kept from an earlier call.
    Driver(cudarc::driver::DriverError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Kernels(e) => e.fmt(f),
            Error::Driver(e) => write!(f, "cudarc: {}", e),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Kernels(e) => Some(e),
            Error::Driver(e) => Some(e),
        }
    }
}

impl From<cudakernels::Error> for Error {
    fn from(e: cudakernels::Error) -> Error {
        Error::Kernels(e)
    }
}

impl From<cudarc::driver::DriverError> for Error {
    fn from(e: cudarc::driver::DriverError) -> Error {
        Error::Driver(e)
    }
}
