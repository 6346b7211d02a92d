//! The one error type of the library.
use cust::error::CudaError;
use std::fmt;

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// No CUDA device (or no driver) could be found.
    NoDevice,
    /// A CUDA driver call failed.
    Cuda { call: &'static str, source: CudaError },
    /// The device ran out of memory for an allocation of `bytes`.
    OutOfMemory { bytes: usize },
    /// The operation has no value on an empty input (min, max, minmax).
    Empty { op: &'static str },
    /// A buffer's length does not fit the shape.
    LengthMismatch { what: &'static str, expected: usize, actual: usize },
    /// `lda` is smaller than the number of columns.
    LeadingDimension { lda: usize, n: usize },
    /// A BLAS increment (`incx`, `incy`) is 0; they must be at least 1.
    Stride { what: &'static str, value: usize },
    /// A buffer is not aligned as the chosen kernel needs.
    Misaligned { what: &'static str, required: usize, address: u64 },
    /// The chosen kernel or option does not support this input.
    Unsupported { what: String },
    /// The device is older than the kernels' PTX target; `(major, minor)` compute capabilities.
    UnsupportedDevice { compute_capability: (u32, u32), minimum: (u32, u32) },
    /// A count is beyond what the device or the kernels take (a grid past the device's
    /// largest, a shape whose extent overflows 64 bits).
    TooLarge { what: &'static str, len: usize, max: usize },
    /// NCCL, which multi-GPU work needs, could not be loaded from `library`.
    NcclUnavailable { library: String, reason: String },
    /// An NCCL call failed with its status `code`.
    Nccl { call: &'static str, code: i32, message: String },
    /// An output `what` shares device memory with an input `with` it would be computed from.
    Overlap { what: &'static str, with: &'static str },
    /// A buffer lent to a call is device memory of device `actual`, not of the stream's device
    /// `expected` (ordinals).
    WrongDevice { what: &'static str, expected: u32, actual: u32 },
    /// A buffer lent to a call is memory the device cannot reach: pageable host memory or
    /// an address the driver knows nothing of.
    NotDeviceMemory { what: &'static str, address: u64 },
    /// A buffer lent to a call is device memory of the stream's device, but allocated in a
    /// context other than the device's primary context, which the library's kernels run in.
    ForeignContext { what: &'static str, address: u64 },
    /// A stream given to [`Gpu::borrow_stream`](crate::Gpu::borrow_stream) is not a stream of
    /// device `ordinal`'s primary context, where the library's kernels are loaded.
    ForeignStream { ordinal: u32 },
    /// Rank `rank` of a `MultiGpu` failed (`cause`: its stream's CUDA error, its communicator's
    /// NCCL error, or `TimedOut`). Every communicator was aborted; the `MultiGpu` then returns
    /// this error from every collective call.
    RankFailed { rank: usize, cause: Box<Error> },
    /// Work was still running when a wait's `limit` passed.
    TimedOut { limit: std::time::Duration },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoDevice => write!(f, "no CUDA device was found"),
            Error::Cuda { call, source } => write!(f, "CUDA call {} failed: {}", call, source),
            Error::OutOfMemory { bytes } => write!(f, "out of device memory allocating {} bytes", bytes),
            Error::Empty { op } => write!(f, "{} of an empty input is undefined", op),
            Error::LengthMismatch { what, expected, actual } => {
                write!(f, "{} has length {}, expected {}", what, actual, expected)
            }
            Error::LeadingDimension { lda, n } => write!(f, "lda = {} is smaller than n = {}", lda, n),
            Error::Stride { what, value } => write!(f, "{} = {} (must be at least 1)", what, value),
            Error::Misaligned { what, required, address } => {
                write!(f, "{} at {:#x} is not {}-byte aligned", what, address, required)
            }
            Error::Unsupported { what } => write!(f, "unsupported: {}", what),
            Error::UnsupportedDevice { compute_capability: (a, b), minimum: (c, d) } => {
                write!(f, "compute capability {}.{} is below the kernels' minimum {}.{}", a, b, c, d)
            }
            Error::TooLarge { what, len, max } => write!(f, "{} = {} exceeds the maximum {}", what, len, max),
            Error::NcclUnavailable { library, reason } => write!(
                f,
                "multi-GPU work needs NCCL 2.4 or newer, and {} could not be loaded: {}. Install NCCL (Debian/Ubuntu: \
                 `apt install libnccl2`; or `pip install nvidia-nccl-cu12` and add its lib folder to \
                 LD_LIBRARY_PATH)",
                library, reason
            ),
            Error::Nccl { call, code, message } => write!(f, "NCCL call {} failed ({}): {}", call, code, message),
            Error::Overlap { what, with } => write!(f, "{} overlaps {} in device memory", what, with),
            Error::WrongDevice { what, expected, actual } => {
                write!(f, "{} is memory of device {}, not of the stream's device {}", what, actual, expected)
            }
            Error::NotDeviceMemory { what, address } => {
                write!(f, "{} at {:#x} is not device memory (host memory or an unknown address)", what, address)
            }
            Error::ForeignContext { what, address } => write!(
                f,
                "{} at {:#x} was allocated in a context other than the device's primary context",
                what, address
            ),
            Error::ForeignStream { ordinal } => write!(
                f,
                "the stream is not a stream of device {}'s primary context, where the library's kernels are loaded",
                ordinal
            ),
            Error::RankFailed { rank, cause } => write!(
                f,
                "rank {} failed: {}; every NCCL communicator of its MultiGpu was aborted, and it takes no more \
                 collective work",
                rank, cause
            ),
            Error::TimedOut { limit } => write!(f, "still running after the wait limit of {:?}", limit),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// Maps a failed CUDA call named `call` to `Error::Cuda` (for `map_err`).
    pub fn cuda(call: &'static str) -> impl Fn(CudaError) -> Error {
        move |source| Error::Cuda { call, source }
    }
}

/// Attaches the driver call's name to a `cust` result.
pub(crate) trait Check<T> {
    fn check(self, call: &'static str) -> Result<T>;
}

impl<T> Check<T> for std::result::Result<T, CudaError> {
    fn check(self, call: &'static str) -> Result<T> {
        self.map_err(|source| match source {
            CudaError::NoDevice => Error::NoDevice,
            source => Error::Cuda { call, source },
        })
    }
}

/// Allocates `len` elements, reporting out-of-memory with the size asked for.
pub(crate) fn alloc<T: cust::memory::DeviceCopy>(len: usize) -> Result<cust::memory::DeviceBuffer<T>> {
    // SAFETY: every buffer allocated here is written by a kernel or a copy before it is read.
    unsafe { cust::memory::DeviceBuffer::uninitialized(len) }.map_err(out_of_memory::<T>(len, "cuMemAlloc"))
}

fn out_of_memory<T>(len: usize, call: &'static str) -> impl Fn(CudaError) -> Error {
    move |e| match e {
        CudaError::OutOfMemory => Error::OutOfMemory { bytes: len * std::mem::size_of::<T>() },
        source => Error::Cuda { call, source },
    }
}
