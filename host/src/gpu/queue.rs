//! The CUDA stream a [`GpuStream`](super::GpuStream) enqueues on: one the library made and owns,
//! or the caller's, which it never destroys. Copies, memsets, launches and waits go through the
//! driver's own calls on the raw handle, so both kinds take the same path.
use super::dependent_launch::DependentLauncher;
use crate::error::{Check, Result};
use cust::error::{CudaError, CudaResult};
use cust::function::Function;
use cust::stream::Stream;
use cust::sys::{CUresult, CUstream};
use std::ffi::c_void;

/// A library stream's CUDA stream.
pub(super) enum Queue {
    /// Made by the library (`cuStreamCreate`), destroyed when it drops.
    Own(Stream),
    /// The caller's: used, never destroyed. The caller promised it outlives the `GpuStream`.
    Caller(CUstream),
}

// SAFETY: a CUstream handle may be used from any thread (the driver API is thread-safe); the
// caller's handle is only passed to driver calls, as cust's `Stream` (Send + Sync) passes its own.
unsafe impl Send for Queue {}
// SAFETY: as for Send: `&Queue` only hands the handle to thread-safe driver calls.
unsafe impl Sync for Queue {}

impl Queue {
    pub(super) fn raw(&self) -> CUstream {
        match self {
            Queue::Own(stream) => stream.as_inner(),
            Queue::Caller(stream) => *stream,
        }
    }

    /// The cust stream, where the library made it.
    pub(super) fn own(&self) -> Option<&Stream> {
        match self {
            Queue::Own(stream) => Some(stream),
            Queue::Caller(_) => None,
        }
    }

    /// Waits for everything enqueued on the stream; reports kernel faults.
    pub(super) fn synchronize(&self) -> Result<()> {
        // SAFETY: a live stream handle (ours, or the caller's, which outlives us).
        driver(unsafe { cust::sys::cuStreamSynchronize(self.raw()) }).check("cuStreamSynchronize")
    }

    /// Enqueues zeroing `bytes` at `ptr`: as 32-bit words where `ptr` and `bytes` allow, else
    /// as bytes (on an H100 the two filled 512 MiB within 2% of each other, either one ahead;
    /// the tuning log has the figures).
    ///
    /// # Safety
    /// `ptr` is the device-addressable address of at least `bytes` bytes that stay allocated
    /// until the memset has run on this stream.
    pub(super) unsafe fn memset_zero(&self, ptr: u64, bytes: usize) -> Result<()> {
        // SAFETY (both): the caller's promise; the words cover exactly those bytes.
        if ptr % 4 == 0 && bytes % 4 == 0 {
            return driver(unsafe { cust::sys::cuMemsetD32Async(ptr, 0, bytes / 4, self.raw()) })
                .check("cuMemsetD32Async");
        }
        driver(unsafe { cust::sys::cuMemsetD8Async(ptr, 0, bytes, self.raw()) }).check("cuMemsetD8Async")
    }

    /// Enqueues copying `bytes` from device address `src` to host memory at `dst`.
    ///
    /// # Safety
    /// `src` holds `bytes` device-addressable bytes and `dst` `bytes` writable host bytes, both
    /// allocated (and `dst` not otherwise accessed) until the copy has run on this stream.
    pub(super) unsafe fn copy_to_host(&self, dst: *mut c_void, src: u64, bytes: usize) -> Result<()> {
        // SAFETY: the caller's promise.
        driver(unsafe { cust::sys::cuMemcpyDtoHAsync_v2(dst, src, bytes, self.raw()) }).check("cuMemcpyDtoHAsync")
    }

    /// Enqueues copying `bytes` from host memory at `src` to device address `dst`.
    ///
    /// # Safety
    /// As [`Queue::copy_to_host`], with the directions swapped (`src` unchanged until the copy
    /// has run).
    pub(super) unsafe fn copy_from_host(&self, dst: u64, src: *const c_void, bytes: usize) -> Result<()> {
        // SAFETY: the caller's promise.
        driver(unsafe { cust::sys::cuMemcpyHtoDAsync_v2(dst, src, bytes, self.raw()) }).check("cuMemcpyHtoDAsync")
    }

    /// Enqueues `function` on a 1-D `grid` of 1-D `block`s with `params`, no dynamic shared memory;
    /// through `dependent`, where given, as a programmatic dependent launch.
    ///
    /// # Safety
    /// `params` point to the kernel's parameters in number, order and type, and the launch and
    /// every address in them satisfy the kernel's contract until it has run. With `dependent`,
    /// `function`'s entry point waits for the prerequisite grids before it touches memory.
    pub(super) unsafe fn launch(
        &self,
        function: &Function,
        grid: u32,
        block: u32,
        params: &[*mut c_void],
        dependent: Option<DependentLauncher>,
    ) -> Result<()> {
        let params_ptr = params.as_ptr() as *mut *mut c_void;
        if let Some(launcher) = dependent {
            // SAFETY: the caller's promise; the driver copies the parameter values before it returns.
            let result = unsafe { launcher.launch(function.to_raw(), grid, block, self.raw(), params_ptr) };
            return driver(result).check("cuLaunchKernelEx");
        }
        // SAFETY: the caller's promise; the driver copies the parameter values before it returns.
        let result = unsafe {
            cust::sys::cuLaunchKernel(
                function.to_raw(),
                grid,
                1,
                1,
                block,
                1,
                1,
                0,
                self.raw(),
                params_ptr,
                std::ptr::null_mut(),
            )
        };
        driver(result).check("cuLaunchKernel")
    }
}

/// The `CudaError` of a driver call's result (cust keeps its own mapping private): the codes a
/// stream, copy, launch or pointer query reports, any other as unknown.
pub(crate) fn driver(result: CUresult) -> CudaResult<()> {
    use CUresult as R;
    let error = match result {
        R::CUDA_SUCCESS => return Ok(()),
        R::CUDA_ERROR_INVALID_VALUE => CudaError::InvalidValue,
        R::CUDA_ERROR_OUT_OF_MEMORY => CudaError::OutOfMemory,
        R::CUDA_ERROR_NOT_INITIALIZED => CudaError::NotInitialized,
        R::CUDA_ERROR_DEINITIALIZED => CudaError::Deinitialized,
        R::CUDA_ERROR_NO_DEVICE => CudaError::NoDevice,
        R::CUDA_ERROR_INVALID_DEVICE => CudaError::InvalidDevice,
        R::CUDA_ERROR_INVALID_CONTEXT => CudaError::InvalidContext,
        R::CUDA_ERROR_CONTEXT_IS_DESTROYED => CudaError::ContextIsDestroyed,
        R::CUDA_ERROR_INVALID_HANDLE => CudaError::InvalidHandle,
        R::CUDA_ERROR_NOT_READY => CudaError::NotReady,
        R::CUDA_ERROR_ILLEGAL_ADDRESS => CudaError::IllegalAddress,
        R::CUDA_ERROR_MISALIGNED_ADDRESS => CudaError::MisalignedAddress,
        R::CUDA_ERROR_INVALID_ADDRESS_SPACE => CudaError::InvalidAddressSpace,
        R::CUDA_ERROR_INVALID_PC => CudaError::InvalidProgramCounter,
        R::CUDA_ERROR_ILLEGAL_INSTRUCTION => CudaError::IllegalInstruction,
        R::CUDA_ERROR_HARDWARE_STACK_ERROR => CudaError::HardwareStackError,
        R::CUDA_ERROR_ASSERT => CudaError::AssertError,
        R::CUDA_ERROR_LAUNCH_FAILED => CudaError::LaunchFailed,
        R::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES => CudaError::LaunchOutOfResources,
        R::CUDA_ERROR_LAUNCH_TIMEOUT => CudaError::LaunchTimeout,
        R::CUDA_ERROR_ECC_UNCORRECTABLE => CudaError::EccUncorrectable,
        R::CUDA_ERROR_NOT_PERMITTED => CudaError::NotPermitted,
        R::CUDA_ERROR_NOT_SUPPORTED => CudaError::NotSupported,
        _ => CudaError::UnknownError,
    };
    Err(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_results_map_to_their_errors() {
        assert_eq!(driver(CUresult::CUDA_SUCCESS), Ok(()));
        assert_eq!(driver(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS), Err(CudaError::IllegalAddress));
        assert_eq!(driver(CUresult::CUDA_ERROR_INVALID_HANDLE), Err(CudaError::InvalidHandle));
        assert_eq!(driver(CUresult::CUDA_ERROR_OUT_OF_MEMORY), Err(CudaError::OutOfMemory));
        assert_eq!(driver(CUresult::CUDA_ERROR_NO_DEVICE), Err(CudaError::NoDevice));
        assert_eq!(driver(CUresult::CUDA_ERROR_PROFILER_DISABLED), Err(CudaError::UnknownError));
    }
}
